/** The generators of the hostile files (hostile-files.ts lists them): the bytes of each attack, built on demand. */
import { crc32, deflateRawSync, deflateSync } from 'node:zlib';
import { strToU8, unzipSync } from 'fflate';
import { docx, NS, type RawEntry, rawZip } from './ooxml-files.ts';
import { seededRandom } from './seeded-random.ts';

export const NESTED_NAMES = ['w:sdt', 'w:sdtContent', 'w:customXml', 'w:smartTag', 'w:ins', 'w:hyperlink'];
export const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i % 97}`).join(' ');
export const utf8 = (text: string) => strToU8(text);

/** Rows of inline-string cells: `cells(r)` gives row r's [column letters, text] pairs. */
export function inlineRows(count: number, cells: (r: number) => [string, string][]): string {
  const out: string[] = [];
  for (let r = 1; r <= count; r++) {
    const row = cells(r)
      .map(([column, text]) => `<c r="${column}${r}" t="inlineStr"><is><t>${text}</t></is></c>`)
      .join('');
    out.push(`<row r="${r}">${row}</row>`);
  }
  return out.join('');
}

/** A header row of shared strings 1 to `columns`, then rows whose every cell holds shared string 0. */
export function sharedRows(count: number, columns: number): string {
  const letters = Array.from({ length: columns }, (_, c) => String.fromCharCode(65 + c));
  const out: string[] = [];
  for (let r = 1; r <= count; r++) {
    out.push(`<row r="${r}">${letters.map((l, c) => `<c r="${l}${r}" t="s"><v>${r === 1 ? c + 1 : 0}</v></c>`).join('')}</row>`);
  }
  return out.join('');
}

/** A PDF of `pages` pages that share one content stream: a few bytes per page. */
export function manyPagesPdf(pages: number): Uint8Array {
  const objects: string[] = [];
  const kids = Array.from({ length: pages }, (_, i) => `${i + 5} 0 R`).join(' ');
  const content = 'BT /F1 12 Tf 72 720 Td (A page of a very long document.) Tj ET';
  objects.push('<< /Type /Catalog /Pages 2 0 R >>');
  objects.push(`<< /Type /Pages /Count ${pages} /Kids [${kids}] >>`);
  objects.push('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  objects.push(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`);
  const page = '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 3 0 R >> >> >>';
  for (let i = 0; i < pages; i++) objects.push(page);
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(body.length);
    body += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) body += `${String(offset).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return utf8(body);
}

/**
 * A PDF whose one page's content stream is `mb` MB of spaces, flate-compressed about 1000:1: a
 * couple of hundred kilobytes that pdf.js would decode whole.
 */
export function flateBombPdf(mb: number): Uint8Array {
  const text = 'BT /F1 12 Tf 72 720 Td (Text before the bomb.) Tj ET\n';
  const stream = deflateSync(Buffer.concat([Buffer.from(text), Buffer.alloc(mb * 1024 * 1024, 32)]), { level: 9 });
  const head = [
    '%PDF-1.4',
    '1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj',
    '2 0 obj\n<< /Type /Pages /Count 1 /Kids [3 0 R] >>\nendobj',
    '3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>\nendobj',
    `4 0 obj\n<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n`,
  ].join('\n');
  const tail = '\nendstream\nendobj\n5 0 obj\n<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>\nendobj\n';
  const body = Buffer.concat([Buffer.from(`${head}`, 'latin1'), stream, Buffer.from(tail, 'latin1')]);
  // Offsets of objects 1 to 5, for the cross-reference table.
  const offsets = [1, 2, 3, 4, 5].map((n) => body.indexOf(`\n${n} 0 obj`) + 1);
  const xref = `xref\n0 6\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  const trailer = `trailer\n<< /Size 6 /Root 1 0 R >>\nstartxref\n${body.length}\n%%EOF\n`;
  return new Uint8Array(Buffer.concat([body, Buffer.from(xref + trailer, 'latin1')]));
}

/**
 * `size` bytes that start as a 1000 × 1000 PNG does and deflate about 170:1 (a byte of noise
 * every 800), under the zip-bomb ratio: an "image" that only inflating shows to be huge.
 */
export function sparseImage(size: number, seed: number): Uint8Array {
  const bytes = new Uint8Array(size);
  const header = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 3, 0xe8, 0, 0, 3, 0xe8, 8, 2,
  ];
  bytes.set(header);
  const random = seededRandom(seed);
  for (let i = 800; i < size; i += 800) bytes[i] = Math.floor(random() * 256);
  return bytes;
}

/**
 * A PNG whose header declares `width` × `height` pixels of RGB over a few kilobytes of compressed
 * zeros: a decompression bomb for whatever decodes it whole (30 GB of pixels at 100,000 × 100,000).
 */
export function pngBomb(width: number, height: number): Uint8Array {
  const chunk = (type: string, data: Uint8Array) => {
    const out = new Uint8Array(12 + data.byteLength);
    const view = new DataView(out.buffer);
    view.setUint32(0, data.byteLength);
    out.set(utf8(type), 4);
    out.set(data, 8);
    view.setUint32(8 + data.byteLength, crc32(out.subarray(4, 8 + data.byteLength)));
    return out;
  };
  const ihdr = new Uint8Array(13);
  new DataView(ihdr.buffer).setUint32(0, width);
  new DataView(ihdr.buffer).setUint32(4, height);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const idat = new Uint8Array(deflateSync(Buffer.alloc(4 * 1024 * 1024), { level: 9 }));
  const parts = [
    Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a),
    chunk('IHDR', ihdr),
    chunk('IDAT', idat),
    chunk('IEND', new Uint8Array(0)),
  ];
  return new Uint8Array(Buffer.concat(parts));
}

export const ODF_NS =
  'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"';

/**
 * A ZIP package that names its kind in a stored first entry `mimetype` (OpenDocument, EPUB), its
 * other entries deflated; `spaces` MB of spaces follow the text of `bombed`, whose entry honestly
 * declares the size it inflates to.
 */
export function mimetypePackage(
  mimetype: string,
  parts: Record<string, string>,
  bombed?: { part: string; spaces: number },
): Uint8Array {
  const entries: RawEntry[] = [
    { name: 'mimetype', data: utf8(mimetype), method: 0, size: mimetype.length, crc: crc32(utf8(mimetype)) },
  ];
  for (const [name, text] of Object.entries(parts)) {
    const [before, after] = name === bombed?.part ? text.split('@@') : [text, ''];
    const data =
      name === bombed?.part
        ? Buffer.concat([Buffer.from(before ?? ''), Buffer.alloc(bombed.spaces * 2 ** 20, 32), Buffer.from(after ?? '')])
        : Buffer.from(text);
    entries.push(deflatedEntry(name, new Uint8Array(data)));
  }
  return rawZip(entries);
}

/** An EPUB of the given chapters (XHTML bodies) in spine order; `bombMb` MB of spaces end the first. */
export function epubBook(chapters: string[], bombMb?: number): Uint8Array {
  const parts: Record<string, string> = {
    'META-INF/container.xml':
      '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/book.opf" media-type="application/oebps-package+xml"/></rootfiles></container>',
    'OEBPS/book.opf': `<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Generated</dc:title></metadata><manifest>${chapters
      .map((_, i) => `<item id="c${i}" href="c${i}.xhtml" media-type="application/xhtml+xml"/>`)
      .join('')}</manifest><spine>${chapters.map((_, i) => `<itemref idref="c${i}"/>`).join('')}</spine></package>`,
  };
  chapters.forEach((body, i) => {
    parts[`OEBPS/c${i}.xhtml`] =
      `<html xmlns="http://www.w3.org/1999/xhtml"><head><title>c${i}</title></head><body>${body}</body></html>`;
  });
  return mimetypePackage('application/epub+zip', parts, bombMb ? { part: 'OEBPS/c0.xhtml', spaces: bombMb } : undefined);
}

/** An email whose body is `depth` multiparts nested one inside the other, a line of text at the bottom. */
export function nestedMultipartEmail(depth: number): Uint8Array {
  let body = 'Content-Type: text/plain\r\n\r\nThe bottom of the nest.\r\n';
  for (let i = depth; i > 0; i--) {
    body = `Content-Type: multipart/mixed; boundary="b${i}"\r\n\r\n--b${i}\r\n${body}--b${i}--\r\n`;
  }
  return utf8(`From: a@example.com\r\nTo: b@example.com\r\nSubject: Nested\r\nMIME-Version: 1.0\r\n${body}`);
}

/** An email of one multipart with `count` small text attachments. */
export function manyPartsEmail(count: number): Uint8Array {
  const parts = Array.from(
    { length: count },
    (_, i) => `--b\r\nContent-Type: text/plain\r\nContent-Disposition: attachment; filename="n${i}.txt"\r\n\r\nNote ${i}.\r\n`,
  ).join('');
  return utf8(
    `From: a@example.com\r\nTo: b@example.com\r\nSubject: Many\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n${parts}--b--\r\n`,
  );
}

/** An OpenDocument whose content.xml holds `body` inside office:body. */
export function odfDocument(type: 'text' | 'spreadsheet', body: string, bombMb?: number): Uint8Array {
  const content = `<?xml version="1.0"?><office:document-content ${ODF_NS}><office:body>${body}</office:body></office:document-content>`;
  return mimetypePackage(
    `application/vnd.oasis.opendocument.${type}`,
    { 'content.xml': content },
    bombMb ? { part: 'content.xml', spaces: bombMb } : undefined,
  );
}

export function deflatedEntry(name: string, data: Uint8Array): RawEntry {
  return { name, data: new Uint8Array(deflateRawSync(data)), method: 8, size: data.byteLength, crc: crc32(data) };
}

/** A Word document of `count` captioned pictures of `mb` MB each, its XML parts and pictures deflated. */
export function docxWithBigImages(count: number, mb: number): Uint8Array {
  const ids = Array.from({ length: count }, (_, i) => i + 1);
  const body = ids
    .map(
      (i) =>
        `<w:p><w:r><w:t>Figure ${i}</w:t></w:r><w:r><w:drawing><a:blip xmlns:a="${NS.a}" r:embed="rIdImg${i}"/></w:drawing></w:r></w:p>`,
    )
    .join('');
  const parts = unzipSync(
    docx(body, { rels: ids.map((i): [string, string, string] => [`rIdImg${i}`, 'image', `media/image${i}.png`]) }),
  );
  const entries = Object.entries(parts).map(([name, data]) => deflatedEntry(name, data));
  for (const i of ids) entries.push(deflatedEntry(`word/media/image${i}.png`, sparseImage(mb * 1024 * 1024, i)));
  return rawZip(entries);
}

/** `chars` bytes of seeded words of one to nine letters from eight, a space between: text that deflates about 2:1. */
export function seededWords(chars: number, seed: number): Uint8Array {
  const letters = 'etaoinsh';
  const random = seededRandom(seed);
  const text = new Uint8Array(chars);
  for (let i = 0; i < chars; ) {
    const length = 1 + Math.floor(random() * 9);
    for (let j = 0; j < length && i < chars; j++) text[i++] = letters.charCodeAt(Math.floor(random() * letters.length));
    if (i < chars) text[i++] = 32;
  }
  return text;
}

export const LONG_RUN = 'LONG-RUN-TEXT';

/**
 * An Office package whose `part` holds, where its XML says LONG-RUN-TEXT, one text run of `chars`
 * characters (seededWords), spliced in as bytes and deflated by zlib: a 16-million-character part
 * is built in a second, not as a JavaScript string.
 */
export function withLongRun(pkg: Uint8Array, part: string, chars: number): Uint8Array {
  const parts = unzipSync(pkg);
  const xml = parts[part]!;
  const at = Buffer.from(xml).indexOf(LONG_RUN);
  const data = Buffer.concat([xml.subarray(0, at), seededWords(chars, 21), xml.subarray(at + LONG_RUN.length)]);
  return rawZip(Object.entries(parts).map(([name, bytes]) => deflatedEntry(name, name === part ? data : bytes)));
}
