/**
 * PDFs that hide a decompression bomb from anything reading the raw bytes, each one the second
 * review's reproduction (issue 21): pdf.js understands more syntax than a byte scanner does, so the
 * decode budget must hold wherever pdf.js decodes, not where a scanner finds a `/FlateDecode`.
 */
import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';

/** One indirect object: a dictionary, optionally with stream data written right after it. */
export interface PdfObject {
  dict: string;
  stream?: Uint8Array;
  /** What comes between the dictionary's `>>` and the `stream` keyword (a comment, say). */
  beforeStream?: string;
}

const latin1 = (text: string) => Buffer.from(text, 'latin1');

/** A PDF of `objects` (numbered from 1; object 1 the catalog), with an exact cross-reference table. */
export function pdfOf(objects: PdfObject[], trailer = ''): Uint8Array {
  const parts: Buffer[] = [latin1('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n')];
  let length = parts[0]!.length;
  const offsets: number[] = [];
  const push = (part: Buffer) => {
    parts.push(part);
    length += part.length;
  };
  objects.forEach((object, i) => {
    offsets.push(length);
    if (object.stream) {
      push(latin1(`${i + 1} 0 obj\n${object.dict}${object.beforeStream ?? '\n'}stream\n`));
      push(Buffer.from(object.stream));
      push(latin1('\nendstream\nendobj\n'));
    } else {
      push(latin1(`${i + 1} 0 obj\n${object.dict}\nendobj\n`));
    }
  });
  const entries = offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('');
  push(
    latin1(
      `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${entries}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R ${trailer}>>\nstartxref\n${length}\n%%EOF\n`,
    ),
  );
  return new Uint8Array(Buffer.concat(parts));
}

/** A content stream's text operators showing `words`. */
export const showText = (words: string) => `BT /F1 12 Tf 72 720 Td (${words}) Tj ET\n`;

/** `mb` MB of spaces after a line of text, flate-compressed about 1000:1. */
export function spaces(mb: number): Uint8Array {
  return new Uint8Array(
    deflateSync(Buffer.concat([latin1(showText('Text before the bomb.')), Buffer.alloc(mb * 1024 * 1024, 32)]), { level: 9 }),
  );
}

/**
 * A one-page PDF whose content stream (object 4) is `stream`, with its dictionary's filter entry as
 * given, and `extra` objects from number 6 on (object 5 is the font).
 */
function onePage(content: PdfObject, extra: PdfObject[] = [], trailer = ''): Uint8Array {
  return pdfOf(
    [
      { dict: '<< /Type /Catalog /Pages 2 0 R >>' },
      { dict: '<< /Type /Pages /Count 1 /Kids [3 0 R] >>' },
      { dict: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>' },
      content,
      { dict: '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>' },
      ...extra,
    ],
    trailer,
  );
}

/** The filter's name written with a `#46` escape for its `F`, which names allow. */
export function nameEscapePdf(mb: number): Uint8Array {
  const stream = spaces(mb);
  return onePage({ dict: `<< /Length ${stream.length} /Filter /#46lateDecode >>`, stream });
}

/** The filter given as an indirect reference to a name object. */
export function indirectFilterPdf(mb: number): Uint8Array {
  const stream = spaces(mb);
  return onePage({ dict: `<< /Length ${stream.length} /Filter 6 0 R >>`, stream }, [{ dict: '/FlateDecode' }]);
}

/** A comment after `/Filter` and another between the dictionary's `>>` and `stream`. */
export function commentedFilterPdf(mb: number): Uint8Array {
  const stream = spaces(mb);
  return onePage({
    dict: `<< /Length ${stream.length} /Filter % the filter follows\n/FlateDecode >>`,
    beforeStream: ' % a comment before the data\n',
    stream,
  });
}

/** RC4, which PDF's standard security handler (revision 2) encrypts with. */
function rc4(key: Uint8Array, data: Uint8Array): Uint8Array {
  const s = Uint8Array.from({ length: 256 }, (_, i) => i);
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + s[i]! + key[i % key.length]!) & 0xff;
    [s[i], s[j]] = [s[j]!, s[i]!];
  }
  const out = new Uint8Array(data.length);
  for (let n = 0, i = 0, j = 0; n < data.length; n++) {
    i = (i + 1) & 0xff;
    j = (j + s[i]!) & 0xff;
    [s[i], s[j]] = [s[j]!, s[i]!];
    out[n] = data[n]! ^ s[(s[i]! + s[j]!) & 0xff]!;
  }
  return out;
}

const PASSWORD_PADDING = Buffer.from('28bf4e5e4e758a4164004e56fffa01082e2e00b6d0683e802f0ca9fe6453697a', 'hex');
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

/**
 * Encrypted with RC4 (40-bit, revision 2) and an empty user password, so that any reader opens it
 * without asking: its stream's bytes are ciphertext until decrypted.
 */
export function rc4EncryptedPdf(mb: number): Uint8Array {
  const owner = createHash('md5').update('owner').digest();
  const owner32 = Buffer.concat([owner, owner]);
  const id = createHash('md5').update('hostile-rc4').digest();
  const permissions = -4;
  const p = Buffer.alloc(4);
  p.writeInt32LE(permissions);
  const key = createHash('md5')
    .update(Buffer.concat([PASSWORD_PADDING, owner32, p, id]))
    .digest()
    .subarray(0, 5);
  const user = rc4(key, PASSWORD_PADDING);
  const objectKey = createHash('md5')
    .update(Buffer.concat([key, Buffer.from([4, 0, 0, 0, 0])]))
    .digest()
    .subarray(0, 10);
  const stream = rc4(objectKey, spaces(mb));
  return onePage(
    { dict: `<< /Length ${stream.length} /Filter /FlateDecode >>`, stream },
    [{ dict: `<< /Filter /Standard /V 1 /R 2 /O <${hex(owner32)}> /U <${hex(user)}> /P ${permissions} >>` }],
    `/Encrypt 6 0 R /ID [<${hex(id)}> <${hex(id)}>] `,
  );
}

/**
 * One page whose /Contents is `count` streams of `mb` MB each: every one under a per-stream cap,
 * which pdf.js then joins into one buffer of them all.
 */
export function contentsArrayPdf(count: number, mb: number): Uint8Array {
  const stream = spaces(mb);
  const refs = Array.from({ length: count }, (_, i) => `${i + 4} 0 R`).join(' ');
  const font = count + 4;
  return pdfOf([
    { dict: '<< /Type /Catalog /Pages 2 0 R >>' },
    { dict: '<< /Type /Pages /Count 1 /Kids [3 0 R] >>' },
    {
      dict: `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents [${refs}] /Resources << /Font << /F1 ${font} 0 R >> >> >>`,
    },
    ...Array.from({ length: count }, () => ({ dict: `<< /Length ${stream.length} /Filter /FlateDecode >>`, stream })),
    { dict: '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>' },
  ]);
}

/**
 * `pages` pages, each with a content stream of `mb` MB: no page over a per-page budget, the
 * document far over it, so only a total per step bounds the work.
 */
export function manyHeavyPagesPdf(pages: number, mb: number): Uint8Array {
  const stream = spaces(mb);
  const kids = Array.from({ length: pages }, (_, i) => `${4 + 2 * i} 0 R`).join(' ');
  const objects: PdfObject[] = [
    { dict: '<< /Type /Catalog /Pages 2 0 R >>' },
    { dict: `<< /Type /Pages /Count ${pages} /Kids [${kids}] >>` },
    { dict: '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>' },
  ];
  for (let i = 0; i < pages; i++) {
    objects.push({
      dict: `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${5 + 2 * i} 0 R /Resources << /Font << /F1 3 0 R >> >> >>`,
    });
    objects.push({ dict: `<< /Length ${stream.length} /Filter /FlateDecode >>`, stream });
  }
  return pdfOf(objects);
}
