import { strToU8, zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { CONTENT_TYPES, detectUploadType, sniffType, typeFromExtension } from '#core/documents/detect-type.ts';
import { detectTextEncoding } from '#core/documents/text-encoding.ts';
import { fixture } from '../support/documents.ts';

const HEAD = 64 * 1024;
const head = (bytes: Uint8Array) => bytes.subarray(0, HEAD);

/** What the API does on upload: the first 64 KiB, and whether that was all of it. */
function upload(name: string, bytes: Uint8Array) {
  return detectUploadType(name, head(bytes), bytes.length <= HEAD);
}

const CONTENT_TYPES_XML = (main: string) =>
  `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
  `<Default Extension="xml" ContentType="application/xml"/><Override PartName="/${main}" ContentType="application/vnd.openxmlformats-officedocument.${
    main.startsWith('word')
      ? 'wordprocessingml.document'
      : main.startsWith('ppt')
        ? 'presentationml.presentation'
        : 'spreadsheetml.sheet'
  }.main+xml"/></Types>`;

describe('typeFromExtension', () => {
  it.each([
    ['Report.PDF', 'pdf'],
    ['a.docx', 'docx'],
    ['deck.pptx', 'pptx'],
    ['book.xlsx', 'xlsx'],
    ['data.csv', 'csv'],
    ['notes.txt', 'txt'],
    ['README.md', 'md'],
    ['notes.markdown', 'md'],
    ['C:\\Users\\me\\report.pdf', 'pdf'],
    ['page.html', 'html'],
    ['page.HTM', 'html'],
    ['scan.jpg', 'jpeg'],
    ['log.ndjson', 'jsonl'],
    ['book.epub', 'epub'],
    ['letter.odt', 'odt'],
    ['mail.eml', 'eml'],
    ['archive.tar.gz', null],
    ['Makefile', null],
    ['setup.exe', null],
    // Names of Object.prototype's members are no extensions (the lookup once answered a function for them).
    ['x.constructor', null],
    ['x.toString', null],
    ['x.__proto__', null],
  ])('%s → %s', (name, type) => {
    expect(typeFromExtension(name)).toBe(type);
  });
});

describe('sniffType', () => {
  it('recognises each fixture format from its bytes', () => {
    expect(sniffType(head(fixture('paper-with-table.pdf')))).toEqual({ kind: 'pdf' });
    expect(sniffType(head(fixture('handbook-1p.docx')))).toEqual({ kind: 'ooxml', type: 'docx' });
    expect(sniffType(head(fixture('docx-tables.docx')))).toEqual({ kind: 'ooxml', type: 'docx' });
    expect(sniffType(head(fixture('sample-presentation-4slides.pptx')))).toEqual({ kind: 'ooxml', type: 'pptx' });
    expect(sniffType(head(fixture('vodafone-financials.xlsx')))).toEqual({ kind: 'ooxml', type: 'xlsx' });
    expect(sniffType(head(fixture('password-protected.xlsx')))).toEqual({ kind: 'cfb' });
    expect(sniffType(fixture('stanley-cups.csv'), { complete: true })).toEqual({ kind: 'text', encoding: 'utf-8' });
  });

  it('finds the OOXML type in a head that ends before the central directory', () => {
    // handbook-1p.docx stores [Content_Types].xml last: a short head only shows word/ part names.
    const cut = fixture('handbook-1p.docx').subarray(0, 3000);
    expect(sniffType(cut)).toEqual({ kind: 'ooxml', type: 'docx' });
    // Its first entry is [Content_Types].xml, inflated from the head alone.
    expect(sniffType(fixture('sample-presentation-4slides.pptx').subarray(0, 2000))).toEqual({ kind: 'ooxml', type: 'pptx' });
  });

  it('tells a zip without Office content types from an Office document', () => {
    const noTypes = zipSync({ 'word/document.xml': strToU8('<w:document/>') });
    expect(sniffType(noTypes, { complete: true })).toEqual({ kind: 'zip', conclusive: true });
    const other = zipSync({
      '[Content_Types].xml': strToU8('<Types><Override PartName="/x" ContentType="text/plain"/></Types>'),
    });
    expect(sniffType(other, { complete: true })).toEqual({ kind: 'zip', conclusive: true });
    // A head showing only an unrelated first entry cannot decide.
    const big = zipSync({
      'docProps/thumbnail.bin': [crypto.getRandomValues(new Uint8Array(60_000)), { level: 0 }],
      'x.xml': strToU8('x'),
    });
    expect(sniffType(big.subarray(0, 30_000))).toEqual({ kind: 'zip', conclusive: false });
  });

  it('detects text encodings', () => {
    expect(detectTextEncoding(strToU8('plain ascii\n'))).toBe('utf-8');
    expect(detectTextEncoding(Uint8Array.of(0xef, 0xbb, 0xbf, 0x61))).toBe('utf-8');
    expect(detectTextEncoding(Uint8Array.of(0xff, 0xfe, 0x61, 0x00, 0x62, 0x00))).toBe('utf-16le');
    expect(detectTextEncoding(Uint8Array.of(0xfe, 0xff, 0x00, 0x61, 0x00, 0x62))).toBe('utf-16be');
    expect(detectTextEncoding(new Uint8Array(Buffer.from('no bom here, little endian\n', 'utf16le')))).toBe('utf-16le');
    expect(detectTextEncoding(new Uint8Array(Buffer.from('Café, crème brûlée\n', 'latin1')))).toBe('windows-1252');
    expect(detectTextEncoding(Uint8Array.of(0x61, 0x00, 0x62, 0x01, 0x02, 0x03))).toBeNull();
    expect(detectTextEncoding(strToU8('text\u0001with\u0002many\u0003controls'))).toBeNull();
  });

  it('accepts a multi-byte character cut by the end of a head, but not of a whole file', () => {
    const euro = strToU8('price: 5 €');
    const cut = euro.subarray(0, euro.length - 1);
    expect(detectTextEncoding(cut, false)).toBe('utf-8');
    expect(detectTextEncoding(cut, true)).not.toBe('utf-8');
  });
});

describe('detectUploadType', () => {
  it('accepts every fixture under its own name', () => {
    for (const [name, type] of [
      ['paper-with-table.pdf', 'pdf'],
      ['handbook-1p.docx', 'docx'],
      ['docx-tables.docx', 'docx'],
      ['sample-presentation-4slides.pptx', 'pptx'],
      ['pptx-table.pptx', 'pptx'],
      ['vodafone-financials.xlsx', 'xlsx'],
      ['stanley-cups.csv', 'csv'],
      ['semicolon-delimited.csv', 'csv'],
      ['scan-linn-2col.groundtruth.txt', 'txt'],
      ['paul-graham-ideas.html', 'html'],
      ['table-multi-row-column-cells.png', 'png'],
      ['layout-parser-paper.jpg', 'jpeg'],
      ['kitten.webp', 'webp'],
      ['unstructured-elements.json', 'json'],
      ['unstructured-elements.jsonl', 'jsonl'],
      ['tika-two-chapters.epub', 'epub'],
      ['tika-features.odt', 'odt'],
      ['odt-table.odt', 'odt'],
      ['columnar.ods', 'ods'],
      ['impress-two-slides.odp', 'odp'],
      ['password-protected.odt', 'odt'],
      ['email-with-attachment.eml', 'eml'],
      ['email-two-attachments.eml', 'eml'],
    ] as const) {
      expect(upload(name, fixture(name)), name).toEqual({ ok: true, type, contentType: CONTENT_TYPES[type] });
    }
  });

  it('accepts an encrypted workbook, whose job then fails as password-protected', () => {
    expect(upload('secret.xlsx', fixture('password-protected.xlsx'))).toMatchObject({ ok: true, type: 'xlsx' });
  });

  it.each([
    [
      'PDF bytes named .docx',
      'paper.docx',
      'paper-with-table.pdf',
      /\.docx extension: it looks like a PDF document, not a Word document/,
    ],
    ['DOCX named .xlsx', 'book.xlsx', 'handbook-1p.docx', /looks like a Word document, not an Excel workbook/],
    ['PPTX named .docx', 'deck.docx', 'pptx-table.pptx', /looks like a PowerPoint presentation/],
    ['XLSX named .pdf', 'report.pdf', 'vodafone-financials.xlsx', /looks like an Excel workbook, not a PDF/],
    ['a compound file named .csv', 'data.csv', 'password-protected.xlsx', /legacy binary Office file/],
    ['a PDF named .txt', 'notes.txt', 'paper-with-table.pdf', /not a text file/],
  ])('refuses %s', (_what, name, source, reason) => {
    const result = upload(name, fixture(source));
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toMatch(reason);
  });

  it('refuses a zip without content types under an Office name', () => {
    const zip = zipSync({ 'word/document.xml': strToU8('<w:document/>') });
    expect(detectUploadType('a.docx', zip, true)).toMatchObject({ ok: false, reason: expect.stringMatching(/ZIP archive/) });
  });

  it('checks OOXML content types against the extension', () => {
    const pptx = zipSync({
      '[Content_Types].xml': strToU8(CONTENT_TYPES_XML('ppt/presentation.xml')),
      'ppt/presentation.xml': strToU8('<p/>'),
    });
    expect(detectUploadType('a.pptx', pptx, true)).toMatchObject({ ok: true, type: 'pptx' });
    expect(detectUploadType('a.xlsx', pptx, true)).toMatchObject({ ok: false });
  });

  it('checks text content', () => {
    expect(detectUploadType('a.txt', strToU8('Hello, wörld ✓\n'), true)).toMatchObject({ ok: true, type: 'txt' });
    expect(detectUploadType('a.md', strToU8('# Title\n\ntext'), true)).toMatchObject({
      ok: true,
      type: 'md',
      contentType: 'text/markdown',
    });
    const utf16 = new Uint8Array([0xff, 0xfe, ...Buffer.from('a,b\n1,2\n', 'utf16le')]);
    expect(detectUploadType('a.csv', utf16, true)).toMatchObject({ ok: true, type: 'csv' });
    expect(detectUploadType('a.txt', utf16, true)).toMatchObject({ ok: true, type: 'txt' });
    // Legacy 8-bit text: spreadsheet exports (CSV) yes, prose (TXT, MD) must be UTF-8.
    const latin1 = new Uint8Array(Buffer.from('name;city\nJosé;Málaga\n', 'latin1'));
    expect(detectUploadType('a.csv', latin1, true)).toMatchObject({ ok: true });
    expect(detectUploadType('a.txt', latin1, true)).toMatchObject({ ok: false, reason: expect.stringMatching(/not UTF-8/) });
    expect(detectUploadType('a.md', Uint8Array.of(0x23, 0x20, 0xc3, 0x28, 0xa0, 0xa1, 0x0a), true)).toMatchObject({ ok: false });
  });

  it('refuses binary data disguised as text, naming what it is', () => {
    const png = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52);
    expect(detectUploadType('photo.txt', png, true)).toMatchObject({ ok: false, reason: expect.stringMatching(/PNG image/) });
    const exe = new Uint8Array(512);
    exe.set([0x4d, 0x5a, 0x90, 0x00, 0x03]);
    expect(detectUploadType('data.csv', exe, true)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/Windows executable/),
    });
    const random = crypto.getRandomValues(new Uint8Array(4096));
    expect(detectUploadType('notes.md', random, true).ok).toBe(false);
  });

  it('explains unsupported names', () => {
    expect(detectUploadType('setup.exe', new Uint8Array(10), true)).toEqual({
      ok: false,
      reason:
        'Unsupported file type .exe: upload a PDF, DOCX, PPTX, XLSX, ODT, ODS, ODP, EPUB, CSV, TXT, MD, HTML, JSON, JSONL, EML, PNG, JPEG or WebP file',
    });
    expect(detectUploadType('README', strToU8('text'), true)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/no extension/),
    });
    expect(detectUploadType('old.doc', fixture('password-protected.xlsx'), false)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/Legacy binary Office files/),
    });
  });

  it('tells the new formats by their content, not their names', () => {
    const json = fixture('unstructured-elements.json');
    const jsonl = fixture('unstructured-elements.jsonl');
    const eml = fixture('email-with-attachment.eml');
    expect(detectUploadType('data.jsonl', json, true)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/a JSON file, not a JSON Lines file/),
    });
    expect(detectUploadType('data.json', jsonl, true)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/a JSON Lines file, not a JSON file/),
    });
    expect(detectUploadType('page.html', eml, true)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/an email message, not an HTML page/),
    });
    expect(detectUploadType('mail.eml', fixture('paul-graham-ideas.html'), true)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/an HTML page, not an email message/),
    });
    expect(detectUploadType('photo.png', fixture('layout-parser-paper.jpg'), true)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/a JPEG image, not a PNG image/),
    });
    expect(detectUploadType('book.epub', fixture('tika-features.odt'), true)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/an OpenDocument text, not an EPUB book/),
    });
    expect(detectUploadType('sheet.ods', fixture('handbook-1p.docx'), true)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/a Word document/),
    });
    // A head cut inside a record is still JSON so far; a broken one is not.
    expect(detectUploadType('big.json', strToU8('[{"a": 1}, {"b": "cut he'), false)).toMatchObject({ ok: true, type: 'json' });
    expect(detectUploadType('big.json', strToU8('[{"a": 1}, {"b" 2'), false).ok).toBe(false);
    expect(detectUploadType('notes.json', strToU8('just words'), true).ok).toBe(false);
  });

  it('takes the package kind from the mimetype entry, wherever it stands', () => {
    expect(sniffType(head(fixture('tika-two-chapters.epub')))).toEqual({ kind: 'package', type: 'epub' });
    expect(sniffType(head(fixture('columnar.ods')))).toEqual({ kind: 'package', type: 'ods' });
    expect(sniffType(fixture('kitten.webp'), { complete: true })).toEqual({ kind: 'image', type: 'webp' });
  });

  it('leaves an empty file to the ingest job, which reports it', () => {
    expect(detectUploadType('empty.pdf', new Uint8Array(0), true)).toMatchObject({ ok: true, type: 'pdf' });
  });
});
