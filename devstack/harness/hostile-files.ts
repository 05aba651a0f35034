/**
 * Small files that once hung, flooded or exhausted the ingest worker's parse step, generated
 * here so the unit suite (test/unit/hostile-files.test.ts) and the benchmark
 * (bench/hostile/hostile-files.ts) read the same bytes. Each is the issue's reproduction or one of the
 * same kind; `runSteps` drives a document through the extract steps as the worker does.
 */
import { crc32, deflateRawSync, deflateSync } from 'node:zlib';
import { strToU8, unzipSync } from 'fflate';
import {
  commentedFilterPdf,
  contentsArrayPdf,
  indirectFilterPdf,
  manyHeavyPagesPdf,
  nameEscapePdf,
  rc4EncryptedPdf,
} from './hostile-pdfs.ts';
import { docx, NS, pptx, type RawEntry, rawZip, xlsx } from './ooxml-files.ts';
import { seededRandom } from './seeded-random.ts';

/**
 * The document types of the set. Each is one of the product's (`DocType` in src/core/documents/detect-type.ts), which
 * the devstack may not import; the unit suite and the benchmarks hand it to the parsers, which type-check it there.
 */
export type HostileType =
  | 'csv'
  | 'docx'
  | 'eml'
  | 'epub'
  | 'html'
  | 'json'
  | 'jsonl'
  | 'md'
  | 'ods'
  | 'odt'
  | 'pdf'
  | 'png'
  | 'pptx'
  | 'txt'
  | 'xlsx';

export interface HostileFile {
  name: string;
  type: HostileType;
  /** What it attacks, for the benchmark's table. */
  what: string;
  /** Generated on demand: some are megabytes. */
  bytes(): Uint8Array;
  /** Too large to generate in the unit suite; the benchmark runs it. */
  benchOnly?: boolean;
}

const NESTED_NAMES = ['w:sdt', 'w:sdtContent', 'w:customXml', 'w:smartTag', 'w:ins', 'w:hyperlink'];
const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i % 97}`).join(' ');
const utf8 = (text: string) => strToU8(text);

/** Rows of inline-string cells: `cells(r)` gives row r's [column letters, text] pairs. */
function inlineRows(count: number, cells: (r: number) => [string, string][]): string {
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
function sharedRows(count: number, columns: number): string {
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
function sparseImage(size: number, seed: number): Uint8Array {
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

const ODF_NS =
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

function deflatedEntry(name: string, data: Uint8Array): RawEntry {
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
function seededWords(chars: number, seed: number): Uint8Array {
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

const LONG_RUN = 'LONG-RUN-TEXT';

/**
 * An Office package whose `part` holds, where its XML says LONG-RUN-TEXT, one text run of `chars`
 * characters (seededWords), spliced in as bytes and deflated by zlib: a 16-million-character part
 * is built in a second, not as a JavaScript string.
 */
function withLongRun(pkg: Uint8Array, part: string, chars: number): Uint8Array {
  const parts = unzipSync(pkg);
  const xml = parts[part]!;
  const at = Buffer.from(xml).indexOf(LONG_RUN);
  const data = Buffer.concat([xml.subarray(0, at), seededWords(chars, 21), xml.subarray(at + LONG_RUN.length)]);
  return rawZip(Object.entries(parts).map(([name, bytes]) => deflatedEntry(name, name === part ? data : bytes)));
}

export const HOSTILE_FILES: HostileFile[] = [
  {
    name: 'xlsx-shared-string',
    type: 'xlsx',
    what: 'one 50,000-character shared string in each of 60,000 cells (3 G characters)',
    bytes: () =>
      xlsx([{ name: 'S', rows: sharedRows(3_000, 20) }], {
        sharedStrings: [words(7_000), ...Array.from({ length: 20 }, (_, c) => `Column ${c + 1}`)],
      }),
  },
  {
    name: 'xlsx-header-repeat',
    type: 'xlsx',
    what: 'a header of 20 cells of 10,000 characters over 5,000 one-character rows',
    bytes: () =>
      xlsx([
        {
          name: 'S',
          rows: inlineRows(5_000, (r) =>
            r === 1
              ? Array.from({ length: 20 }, (_, c): [string, string] => [String.fromCharCode(65 + c), `h${c} ${words(1_400)}`])
              : Array.from({ length: 20 }, (_, c): [string, string] => [String.fromCharCode(65 + c), 'x']),
          ),
        },
      ]),
  },
  {
    name: 'xlsx-last-column',
    type: 'xlsx',
    what: '30,000 rows with one cell each, in the last column (XFD)',
    bytes: () => xlsx([{ name: 'S', rows: inlineRows(30_000, (r) => [['XFD', `v${r}`]]) }]),
  },
  {
    name: 'xlsx-merges',
    type: 'xlsx',
    what: '10,000 merged ranges and 50,000 rows: every row looked at every range',
    bytes: () =>
      xlsx([
        {
          name: 'S',
          rows: inlineRows(50_000, (r) => [
            ['A', `a${r}`],
            ['B', `b${r}`],
          ]),
          tail: `<mergeCells>${Array.from({ length: 10_000 }, (_, i) => `<mergeCell ref="C${2 * i + 1}:C${2 * i + 2}"/>`).join('')}</mergeCells>`,
        },
      ]),
  },
  {
    name: 'md-heading',
    type: 'md',
    what: 'a 5 KB heading line of spaces that the heading regex cannot match',
    bytes: () => utf8(`# ${' '.repeat(5_000)}\u2028\n\nBody.`),
  },
  {
    name: 'md-table-delimiter',
    type: 'md',
    what: 'a table row, then 50,000 spaces where the delimiter row belongs',
    bytes: () => utf8(`a | b\n-${' '.repeat(50_000)}x\n`),
  },
  {
    name: 'md-bold',
    type: 'md',
    what: '`**a ` 40,000 times: bold markers with no closing partner',
    bytes: () => utf8('**a '.repeat(40_000)),
  },
  {
    name: 'md-links',
    type: 'md',
    what: '`[a](` 20,000 times, and 50,000 `[`: link brackets with no partner',
    bytes: () => utf8(`${'[a]('.repeat(20_000)}\n\n${'['.repeat(50_000)}`),
  },
  {
    name: 'md-line-4mb',
    type: 'md',
    what: 'one line of 4 MB without a space (it was cut in quadratic time)',
    bytes: () => utf8('a'.repeat(4 * 2 ** 20)),
    benchOnly: true,
  },
  {
    name: 'md-line-16mb',
    type: 'md',
    what: 'one line of 16 MB without a space',
    bytes: () => utf8('a'.repeat(16 * 2 ** 20)),
    benchOnly: true,
  },
  {
    name: 'txt-dots',
    type: 'txt',
    what: 'a 50 KB run of dots (the sentence splitter)',
    bytes: () => utf8(`Start ${'.'.repeat(50_000)}`),
  },
  {
    name: 'docx-deep-nesting',
    type: 'docx',
    what: 'elements nested 200,000 deep (the namespace lookup walked them all)',
    bytes: () => {
      // Element names drawn at random, so the part compresses like a real one and passes the zip-bomb check.
      const random = seededRandom(9);
      const names = Array.from({ length: 200_000 }, () => NESTED_NAMES[Math.floor(random() * NESTED_NAMES.length)]);
      const open = names.map((name) => `<${name}>`).join('');
      const close = names
        .reverse()
        .map((name) => `</${name}>`)
        .join('');
      return docx(`${open}${close}<w:p><w:r><w:t>After</w:t></w:r></w:p>`);
    },
  },
  {
    name: 'docx-attribute-run',
    type: 'docx',
    what: 'a tag with a 100,000-character run and no attribute value',
    bytes: () => docx(`<w:p ${'a'.repeat(100_000)}><w:r><w:t>Text</w:t></w:r></w:p>`),
  },
  {
    name: 'docx-million-runs',
    type: 'docx',
    what: 'one paragraph of 1,200,000 runs (a tree of millions of nodes)',
    bytes: () => {
      const random = seededRandom(10);
      const runs = Array.from({ length: 1_200_000 }, () => `<w:r><w:t>${random() < 0.5 ? 'a' : 'b'}</w:t></w:r>`);
      return docx(`<w:p>${runs.join('')}</w:p>`);
    },
    benchOnly: true,
  },
  {
    name: 'docx-long-run',
    type: 'docx',
    what: 'one paragraph of one text run of 16.8 M characters (7.1 MB), past the 16 M budget',
    bytes: () =>
      withLongRun(docx(`<w:p><w:r><w:t xml:space="preserve">${LONG_RUN}</w:t></w:r></w:p>`), 'word/document.xml', 16 * 2 ** 20),
    benchOnly: true,
  },
  {
    name: 'pptx-long-run',
    type: 'pptx',
    what: 'a slide of one text run of 16.8 M characters (7.1 MB)',
    bytes: () =>
      withLongRun(
        pptx([{ shapes: `<p:sp><p:txBody><a:p><a:r><a:t>${LONG_RUN}</a:t></a:r></a:p></p:txBody></p:sp>` }]),
        'ppt/slides/slide1.xml',
        16 * 2 ** 20,
      ),
    benchOnly: true,
  },
  {
    name: 'docx-big-images',
    type: 'docx',
    what: 'four pictures that inflate to 30 MB each (770 KB)',
    bytes: () => docxWithBigImages(4, 30),
  },
  {
    name: 'html-nested-11k',
    type: 'html',
    what: '1,000 nested divs (11 KB), through Readability',
    bytes: () => utf8(`<html><body>${'<div>'.repeat(1_000)}Deep text.${'</div>'.repeat(1_000)}</body></html>`),
  },
  {
    name: 'html-nested-55k',
    type: 'html',
    what: '5,000 nested divs (55 KB)',
    bytes: () => utf8(`<html><body>${'<div>'.repeat(5_000)}Deep text.${'</div>'.repeat(5_000)}</body></html>`),
  },
  {
    name: 'html-unclosed-tags',
    type: 'html',
    what: '`<html ` 100,000 times with no `>` (the page-wrapping regex)',
    bytes: () => utf8(`<p>Text</p>${'<html '.repeat(100_000)}`),
  },
  {
    name: 'html-200k-paragraphs',
    type: 'html',
    what: 'a 4 MB page of 125,000 paragraphs',
    bytes: () => utf8(`<html><body>${'<p>Some words in a paragraph.</p>'.repeat(125_000)}</body></html>`),
    benchOnly: true,
  },
  {
    name: 'png-pixel-bomb',
    type: 'png',
    what: 'a PNG declaring 100,000 × 100,000 pixels over 4 MB of zeros (4 KB)',
    bytes: () => pngBomb(100_000, 100_000),
  },
  {
    name: 'json-deep-nesting',
    type: 'json',
    what: '1,000,000 nested arrays (2 MB)',
    bytes: () => utf8(`${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`),
  },
  {
    name: 'json-5mb-records',
    type: 'json',
    what: 'an array of 120,000 small records (4.9 MB), parsed whole',
    bytes: () => utf8(`[${Array.from({ length: 120_000 }, (_, i) => `{"id":${i},"name":"item ${i}","ok":true}`).join(',')}]`),
    benchOnly: true,
  },
  {
    name: 'jsonl-300k-records',
    type: 'jsonl',
    what: '300,000 records of one line each (15 MB), past the 8 MB read',
    bytes: () => utf8(Array.from({ length: 300_000 }, (_, i) => `{"id":${i},"name":"record ${i}","tags":["a","b"]}\n`).join('')),
    benchOnly: true,
  },
  {
    name: 'odt-zip-bomb',
    type: 'odt',
    what: 'a content.xml that inflates to 100 MB of spaces (100 KB)',
    bytes: () => odfDocument('text', '<office:text><text:p>Before the bomb.@@</text:p></office:text>', 100),
  },
  {
    name: 'epub-zip-bomb',
    type: 'epub',
    what: 'a chapter that inflates to 100 MB of spaces (100 KB)',
    bytes: () => epubBook(['<h1>Before the bomb</h1><p>Text.@@</p>', '<p>After.</p>'], 100),
  },
  {
    name: 'epub-2000-chapters',
    type: 'epub',
    what: '1,990 chapters of 1,000 nested divs each, through the HTML reader',
    bytes: () =>
      epubBook(Array.from({ length: 1_990 }, (_, i) => `${'<div>'.repeat(1_000)}Chapter ${i}.${'</div>'.repeat(1_000)}`)),
    benchOnly: true,
  },
  {
    name: 'eml-mime-bomb',
    type: 'eml',
    what: '10,000 multiparts nested one inside the other (690 KB)',
    bytes: () => nestedMultipartEmail(10_000),
  },
  {
    name: 'eml-20000-attachments',
    type: 'eml',
    what: 'one multipart of 20,000 text attachments (2 MB)',
    bytes: () => manyPartsEmail(20_000),
  },
  {
    name: 'eml-attached-emails',
    type: 'eml',
    what: 'an email attached inside an email, 6 deep, base64 each time',
    bytes: () => {
      let mail = utf8('From: a@example.com\r\nTo: b@example.com\r\nSubject: Innermost\r\n\r\nThe innermost text.\r\n');
      for (let i = 0; i < 6; i++) {
        const encoded = Buffer.from(mail).toString('base64');
        mail = utf8(
          `From: a@example.com\r\nTo: b@example.com\r\nSubject: Level ${i}\r\nContent-Type: multipart/mixed; boundary="z"\r\n\r\n--z\r\nContent-Type: text/plain\r\n\r\nLevel ${i}.\r\n--z\r\nContent-Type: message/rfc822; name="m${i}.eml"\r\nContent-Disposition: attachment; filename="m${i}.eml"\r\nContent-Transfer-Encoding: base64\r\n\r\n${encoded}\r\n--z--\r\n`,
        );
      }
      return mail;
    },
  },
  {
    name: 'odt-deep-nesting',
    type: 'odt',
    what: '30,000 nested sections (a content.xml of 840 KB)',
    bytes: () =>
      odfDocument(
        'text',
        `<office:text>${'<text:section>'.repeat(30_000)}<text:p>Deep.</text:p>${'</text:section>'.repeat(30_000)}</office:text>`,
      ),
  },
  {
    name: 'ods-repeated-cells',
    type: 'ods',
    what: 'a row of 16,384 repeated cells repeated 1,048,576 times, and a million blank rows',
    bytes: () =>
      odfDocument(
        'spreadsheet',
        '<office:spreadsheet><table:table table:name="S"><table:table-row><table:table-cell><text:p>Name</text:p></table:table-cell><table:table-cell><text:p>Value</text:p></table:table-cell></table:table-row>' +
          '<table:table-row table:number-rows-repeated="1048576"><table:table-cell table:number-columns-repeated="16384"><text:p>x</text:p></table:table-cell></table:table-row>' +
          '<table:table-row table:number-rows-repeated="1000000"><table:table-cell table:number-columns-repeated="16384"/></table:table-row></table:table></office:spreadsheet>',
      ),
  },
  {
    name: 'csv-header-repeat',
    type: 'csv',
    what: 'a header of 50 fields of 2,000 characters over 20,000 rows',
    bytes: () =>
      utf8(
        `${Array.from({ length: 50 }, (_, c) => `h${c} ${words(280)}`).join(',')}\n${`${Array(50).fill('1').join(',')}\n`.repeat(20_000)}`,
      ),
  },
  {
    name: 'csv-commas',
    type: 'csv',
    what: 'one record of 15,000,000 commas',
    bytes: () => utf8(`a,b\n${','.repeat(15_000_000)}\n`),
    benchOnly: true,
  },
  {
    name: 'txt-one-paragraph',
    type: 'txt',
    what: 'an 8 MB text file of one paragraph',
    bytes: () => utf8(`${'Word and more words. '.repeat(400_000)}`),
    benchOnly: true,
  },
  {
    name: 'pdf-flate-bomb',
    type: 'pdf',
    what: 'one page whose content stream inflates to 200 MB of spaces (200 KB)',
    bytes: () => flateBombPdf(200),
  },
  {
    name: 'pdf-20000-pages',
    type: 'pdf',
    what: '20,000 pages (3 MB): 200 extract steps of 100 pages',
    bytes: () => manyPagesPdf(20_000),
  },
  // The second review's PDFs (issue 21): each hides a 200 MB flate bomb from a reader of the raw bytes.
  {
    name: 'pdf-filter-name-escape',
    type: 'pdf',
    what: 'a 200 MB bomb behind `/Filter /#46lateDecode` (200 KB)',
    bytes: () => nameEscapePdf(200),
  },
  {
    name: 'pdf-filter-indirect',
    type: 'pdf',
    what: 'a 200 MB bomb behind `/Filter 6 0 R` (200 KB)',
    bytes: () => indirectFilterPdf(200),
  },
  {
    name: 'pdf-filter-comment',
    type: 'pdf',
    what: 'a 200 MB bomb behind comments after `/Filter` and before `stream` (200 KB)',
    bytes: () => commentedFilterPdf(200),
  },
  {
    name: 'pdf-rc4-empty-password',
    type: 'pdf',
    what: 'a 200 MB bomb in an RC4-encrypted file with an empty user password (200 KB)',
    bytes: () => rc4EncryptedPdf(200),
  },
  {
    name: 'pdf-contents-8x15mb',
    type: 'pdf',
    what: 'one page whose /Contents is 8 streams of 15 MB each (124 KB)',
    bytes: () => contentsArrayPdf(8, 15),
  },
  {
    name: 'pdf-40-pages-of-15mb',
    type: 'pdf',
    what: '40 pages of a 15 MB content stream each, every one within the page budget (610 KB)',
    bytes: () => manyHeavyPagesPdf(40, 15),
    benchOnly: true,
  },
];

/** What one extract step hands back, as `runSteps` needs it. */
export interface StepOutcome {
  chunks: number;
  warnings: string[];
  /** The next page to read; undefined when the document is done. */
  nextPage?: number;
  /** What pdf.js decompressed in the step, which the next step's budget counts. */
  decodedBytes?: number;
}

export interface RunOutcome {
  status: 'succeeded' | 'partial' | 'failed';
  /** The job's message: its warnings, or the error. */
  message: string;
  chunks: number;
  steps: number;
}

/**
 * Runs a document through the extract steps as the worker does (a PDF one page range per
 * step, each starting where the last one ended, with the chunks and decoded bytes so far), and says how its job
 * would end. An error with a message ends it `failed`; warnings make it `partial`.
 */
export async function runSteps(
  step: (fromPage: number, chunksBefore: number, decodedBefore: number) => Promise<StepOutcome>,
): Promise<RunOutcome> {
  let chunks = 0;
  let decoded = 0;
  let steps = 0;
  const warnings: string[] = [];
  let page: number | undefined = 1;
  try {
    while (page !== undefined) {
      steps++;
      const outcome = await step(page, chunks, decoded);
      chunks += outcome.chunks;
      decoded += outcome.decodedBytes ?? 0;
      warnings.push(...outcome.warnings);
      page = outcome.nextPage;
    }
  } catch (error) {
    return { status: 'failed', message: error instanceof Error ? error.message : String(error), chunks, steps };
  }
  if (chunks === 0) return { status: 'failed', message: 'The document has no text or images that could be read', chunks, steps };
  return { status: warnings.length > 0 ? 'partial' : 'succeeded', message: warnings.join('; '), chunks, steps };
}
