import { Inflate } from 'fflate';

/**
 * What a file is, decided from its name and its bytes. The API calls this on upload with
 * the first bytes of a streamed body (a head of at most 64 KiB), the ingest worker on the
 * whole file; both must agree, so neither trusts the extension or the declared MIME type.
 */

export type DocType = 'pdf' | 'docx' | 'pptx' | 'xlsx' | 'csv' | 'txt' | 'md' | 'html';
export type OoxmlType = 'docx' | 'pptx' | 'xlsx';
export type TextEncoding = 'utf-8' | 'utf-16le' | 'utf-16be' | 'windows-1252';

export const CONTENT_TYPES: Record<DocType, string> = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  csv: 'text/csv',
  txt: 'text/plain',
  md: 'text/markdown',
  html: 'text/html',
};

export type Sniffed =
  | { kind: 'pdf' }
  /** A ZIP whose content types (or, in a head without them, part names) declare this Office format. */
  | { kind: 'ooxml'; type: OoxmlType }
  /**
   * A ZIP that is not an Office document. `conclusive` is false when only a head was seen and it
   * held neither `[Content_Types].xml` nor a telling part name: the full file has to decide.
   */
  | { kind: 'zip'; conclusive: boolean }
  /** An OLE2 compound file: a legacy .doc/.xls/.ppt, or an encrypted OOXML document. */
  | { kind: 'cfb' }
  | { kind: 'text'; encoding: TextEncoding }
  | { kind: 'binary'; format: string | null };

export type UploadCheck = { ok: true; type: DocType; contentType: string } | { ok: false; reason: string };

const EXTENSIONS: Record<string, DocType> = {
  pdf: 'pdf',
  docx: 'docx',
  pptx: 'pptx',
  xlsx: 'xlsx',
  csv: 'csv',
  txt: 'txt',
  md: 'md',
  markdown: 'md',
};

const LABELS: Record<DocType, string> = {
  pdf: 'a PDF document',
  docx: 'a Word document',
  pptx: 'a PowerPoint presentation',
  xlsx: 'an Excel workbook',
  csv: 'a CSV file',
  txt: 'a text file',
  md: 'a Markdown file',
  html: 'a web page',
};

const SUPPORTED = 'upload a PDF, DOCX, PPTX, XLSX, CSV, TXT or MD file';

function extensionOf(filename: string): string | null {
  const base = filename.split(/[/\\]/).pop()?.trim().replace(/\.+$/, '') ?? '';
  const dot = base.lastIndexOf('.');
  return dot <= 0 && !base.startsWith('.') ? null : base.slice(dot + 1).toLowerCase();
}

/** The type an upload's name claims. HTML is not uploadable: only URL ingestion produces it. */
export function typeFromExtension(filename: string): DocType | null {
  const ext = extensionOf(filename);
  return ext === null ? null : (EXTENSIONS[ext] ?? null);
}

const MAGIC: [string, number[]][] = [
  ['a PNG image', [0x89, 0x50, 0x4e, 0x47]],
  ['a JPEG image', [0xff, 0xd8, 0xff]],
  ['a GIF image', [0x47, 0x49, 0x46, 0x38]],
  ['a Windows executable', [0x4d, 0x5a]],
  ['an ELF executable', [0x7f, 0x45, 0x4c, 0x46]],
  ['a gzip archive', [0x1f, 0x8b]],
  ['a RAR archive', [0x52, 0x61, 0x72, 0x21]],
  ['a 7-Zip archive', [0x37, 0x7a, 0xbc, 0xaf]],
];

const startsWith = (bytes: Uint8Array, magic: readonly number[], at = 0) => magic.every((b, i) => bytes[at + i] === b);
const PDF_MAGIC = [0x25, 0x50, 0x44, 0x46, 0x2d];
const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04];
const EMPTY_ZIP_MAGIC = [0x50, 0x4b, 0x05, 0x06];
const CFB_MAGIC = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];

/** Sniffs a file's head (or, with `complete`, the whole file). */
export function sniffType(head: Uint8Array, opts: { complete?: boolean } = {}): Sniffed {
  const complete = opts.complete ?? false;
  if (startsWith(head, PDF_MAGIC)) return { kind: 'pdf' };
  if (startsWith(head, ZIP_MAGIC) || startsWith(head, EMPTY_ZIP_MAGIC)) return sniffZip(head, complete);
  if (startsWith(head, CFB_MAGIC)) return { kind: 'cfb' };
  const encoding = detectTextEncoding(head, complete);
  if (encoding) return { kind: 'text', encoding };
  // Readers accept a PDF header anywhere in the first KiB (some generators prepend junk).
  if (findBytes(head.subarray(0, 1024), PDF_MAGIC) !== -1) return { kind: 'pdf' };
  return { kind: 'binary', format: MAGIC.find(([, magic]) => startsWith(head, magic))?.[0] ?? null };
}

/** Decides an upload's type from its name and head; `complete` says the head is the whole file. */
export function detectUploadType(filename: string, head: Uint8Array, complete: boolean): UploadCheck {
  const ext = extensionOf(filename);
  const type = typeFromExtension(filename);
  if (!type) {
    if (ext === 'html' || ext === 'htm')
      return { ok: false, reason: 'HTML files cannot be uploaded; submit the page URL instead' };
    if (ext === 'doc' || ext === 'xls' || ext === 'ppt') {
      return {
        ok: false,
        reason: 'Legacy binary Office files (.doc, .xls, .ppt) are not supported; save it as .docx/.xlsx/.pptx',
      };
    }
    return {
      ok: false,
      reason: ext === null ? `The file name has no extension: ${SUPPORTED}` : `Unsupported file type .${ext}: ${SUPPORTED}`,
    };
  }
  const ok: UploadCheck = { ok: true, type, contentType: CONTENT_TYPES[type] };
  // Nothing to contradict the name; the ingest job reports the empty file.
  if (head.byteLength === 0) return ok;

  const sniffed = sniffType(head, { complete });
  const mismatch = (): UploadCheck => ({
    ok: false,
    reason: `The file's content does not match its .${ext} extension: it looks like ${describe(sniffed)}, not ${LABELS[type]}`,
  });
  switch (type) {
    case 'pdf':
      return sniffed.kind === 'pdf' ? ok : mismatch();
    case 'docx':
    case 'pptx':
    case 'xlsx':
      if (sniffed.kind === 'ooxml') return sniffed.type === type ? ok : mismatch();
      // An encrypted Office document is a compound file; its job fails with a clear "password-protected".
      if (sniffed.kind === 'cfb') return ok;
      if (sniffed.kind === 'zip' && !sniffed.conclusive) return ok;
      return mismatch();
    case 'csv':
      return sniffed.kind === 'text' ? ok : mismatch();
    case 'txt':
    case 'md':
      return sniffed.kind === 'text' && sniffed.encoding !== 'windows-1252' ? ok : mismatch();
    default:
      return mismatch();
  }
}

function describe(sniffed: Sniffed): string {
  switch (sniffed.kind) {
    case 'pdf':
      return LABELS.pdf;
    case 'ooxml':
      return LABELS[sniffed.type];
    case 'zip':
      return 'a ZIP archive';
    case 'cfb':
      return 'a legacy binary Office file';
    case 'text':
      return sniffed.encoding === 'windows-1252' ? 'text that is not UTF-8' : 'plain text';
    case 'binary':
      return sniffed.format ?? 'binary data';
  }
}

// ---------------------------------------------------------------------------------------------
// ZIP / OOXML

const MAIN_CONTENT_TYPES: [RegExp, OoxmlType][] = [
  [/wordprocessingml\.(document|template)\.main\+xml|ms-word\.(document|template)\.macroEnabled/i, 'docx'],
  [
    /presentationml\.(presentation|slideshow|template)\.main\+xml|ms-powerpoint\.(presentation|slideshow|template)\.macroEnabled/i,
    'pptx',
  ],
  [/spreadsheetml\.(sheet|template)\.main\+xml|ms-excel\.(sheet|template)\.macroEnabled\.main/i, 'xlsx'],
];

const MAIN_PARTS: [string, OoxmlType][] = [
  ['word/document.xml', 'docx'],
  ['ppt/presentation.xml', 'pptx'],
  ['xl/workbook.xml', 'xlsx'],
];

const PART_PREFIXES: [string, OoxmlType][] = [
  ['word/', 'docx'],
  ['ppt/', 'pptx'],
  ['xl/', 'xlsx'],
];

interface LocalEntry {
  name: string;
  method: number;
  dataStart: number;
  /** Null when the local header defers its sizes to a data descriptor and no directory gave them. */
  compressedSize: number | null;
}

function sniffZip(bytes: Uint8Array, complete: boolean): Sniffed {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // A head that ends with a consistent central directory is the whole file, whatever the caller knew.
  const central = centralDirectory(bytes, view);
  const conclusive = complete || central !== null;
  const entries = central ?? localEntries(bytes, view);
  const contentTypes = entries.find((e) => e.name.toLowerCase() === '[content_types].xml');
  if (contentTypes) {
    const { text, finished } = readEntryText(bytes, contentTypes);
    for (const [pattern, type] of MAIN_CONTENT_TYPES) if (pattern.test(text)) return { kind: 'ooxml', type };
    if (finished) return { kind: 'zip', conclusive: true };
  }
  // Every Office document has [Content_Types].xml; in a whole file its absence settles it.
  if (conclusive) return { kind: 'zip', conclusive: true };

  const names = entries.map((e) => e.name.toLowerCase());
  for (const [part, type] of MAIN_PARTS) if (names.includes(part)) return { kind: 'ooxml', type };
  for (const [prefix, type] of PART_PREFIXES) if (names.some((n) => n.startsWith(prefix))) return { kind: 'ooxml', type };
  return { kind: 'zip', conclusive: false };
}

/** The entries of the central directory, or null when the bytes do not end with a consistent one. */
function centralDirectory(bytes: Uint8Array, view: DataView): LocalEntry[] | null {
  const stop = Math.max(0, bytes.byteLength - 22 - 65_535);
  let eocd = -1;
  for (let i = bytes.byteLength - 22; i >= stop; i--) {
    if (view.getUint32(i, true) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd === -1) return null;
  const count = view.getUint16(eocd + 10, true);
  const size = view.getUint32(eocd + 12, true);
  const offset = view.getUint32(eocd + 16, true);
  if (offset + size !== eocd) return null;
  const entries: LocalEntry[] = [];
  const utf8 = new TextDecoder();
  let p = offset;
  for (let i = 0; i < count; i++) {
    if (p + 46 > eocd || view.getUint32(p, true) !== 0x02014b50) return null;
    const nameLength = view.getUint16(p + 28, true);
    const name = utf8.decode(bytes.subarray(p + 46, p + 46 + nameLength)).replace(/^\/+/, '');
    const local = localHeader(bytes, view, view.getUint32(p + 42, true));
    entries.push({
      name,
      method: view.getUint16(p + 10, true),
      dataStart: local?.dataStart ?? bytes.byteLength,
      compressedSize: view.getUint32(p + 20, true),
    });
    p += 46 + nameLength + view.getUint16(p + 30, true) + view.getUint16(p + 32, true);
  }
  return entries;
}

function localHeader(bytes: Uint8Array, view: DataView, p: number): (LocalEntry & { deferred: boolean }) | null {
  if (p + 30 > bytes.byteLength || view.getUint32(p, true) !== 0x04034b50) return null;
  const nameLength = view.getUint16(p + 26, true);
  if (p + 30 + nameLength > bytes.byteLength) return null;
  const deferred = (view.getUint16(p + 6, true) & 8) !== 0;
  return {
    name: new TextDecoder().decode(bytes.subarray(p + 30, p + 30 + nameLength)).replace(/^\/+/, ''),
    method: view.getUint16(p + 8, true),
    dataStart: p + 30 + nameLength + view.getUint16(p + 28, true),
    compressedSize: deferred ? null : view.getUint32(p + 18, true),
    deferred,
  };
}

/** Local file headers found walking the head from its start. */
function localEntries(bytes: Uint8Array, view: DataView): LocalEntry[] {
  const entries: LocalEntry[] = [];
  let p = 0;
  while (entries.length < 10_000) {
    const entry = localHeader(bytes, view, p);
    if (!entry) break;
    entries.push(entry);
    if (entry.compressedSize !== null) {
      p = entry.dataStart + entry.compressedSize;
    } else {
      // Sizes follow the data: find the next header by its signature.
      const next = findBytes(bytes.subarray(entry.dataStart), ZIP_MAGIC);
      if (next === -1) break;
      p = entry.dataStart + next;
    }
  }
  return entries;
}

const CONTENT_TYPES_CAP = 512 * 1024;

/** Whatever text of an entry lies in the head; `finished` when the entry was read to its end. */
function readEntryText(bytes: Uint8Array, entry: LocalEntry): { text: string; finished: boolean } {
  const end = entry.compressedSize === null ? bytes.byteLength : entry.dataStart + entry.compressedSize;
  const data = bytes.subarray(entry.dataStart, Math.min(end, bytes.byteLength));
  const whole = end <= bytes.byteLength;
  const decoder = new TextDecoder();
  if (entry.method === 0) return { text: decoder.decode(data.subarray(0, CONTENT_TYPES_CAP)), finished: whole };
  if (entry.method !== 8) return { text: '', finished: true };
  const chunks: Uint8Array[] = [];
  let total = 0;
  let ended = false;
  try {
    const inflater = new Inflate((chunk, final) => {
      total += chunk.byteLength;
      if (total > CONTENT_TYPES_CAP) throw new RangeError('content types too large');
      chunks.push(chunk);
      if (final) ended = true;
    });
    for (let i = 0; i < data.byteLength; i += 4096) {
      const last = whole && entry.compressedSize !== null && i + 4096 >= data.byteLength;
      inflater.push(data.subarray(i, i + 4096), last);
    }
  } catch {
    // A broken or oversized stream: judge by what was inflated before it failed.
    ended = true;
  }
  let text = '';
  for (const chunk of chunks) text += decoder.decode(chunk, { stream: true });
  return { text: text + decoder.decode(), finished: ended };
}

function findBytes(haystack: Uint8Array, needle: readonly number[]): number {
  const first = needle[0];
  for (
    let i = haystack.indexOf(first!);
    i !== -1 && i + needle.length <= haystack.byteLength;
    i = haystack.indexOf(first!, i + 1)
  ) {
    if (startsWith(haystack, needle, i)) return i;
  }
  return -1;
}

// ---------------------------------------------------------------------------------------------
// Text

const SAMPLE = 64 * 1024;

/**
 * The encoding in which these bytes read as text, or null for binary data. UTF-8 and
 * BOM-marked UTF-16 are recognised; BOM-less UTF-16 by its pattern of zero bytes; other
 * 8-bit text is reported as windows-1252 (only CSV accepts it). With `complete` false the
 * bytes are a head, so a multi-byte sequence cut at its end is not an error.
 */
export function detectTextEncoding(bytes: Uint8Array, complete = true): TextEncoding | null {
  const sample = bytes.byteLength > SAMPLE ? bytes.subarray(0, SAMPLE) : bytes;
  const cut = !complete || sample !== bytes;
  if (startsWith(sample, [0xef, 0xbb, 0xbf])) return utf8Text(sample.subarray(3), cut) ? 'utf-8' : null;
  if (startsWith(sample, [0xff, 0xfe, 0x00, 0x00]) || startsWith(sample, [0x00, 0x00, 0xfe, 0xff])) return null;
  if (startsWith(sample, [0xff, 0xfe])) return utf16Text(sample.subarray(2), 'utf-16le', cut) ? 'utf-16le' : null;
  if (startsWith(sample, [0xfe, 0xff])) return utf16Text(sample.subarray(2), 'utf-16be', cut) ? 'utf-16be' : null;

  const bomless = bomlessUtf16(sample);
  if (bomless) return utf16Text(sample, bomless, cut) ? bomless : null;
  if (sample.includes(0)) return null;
  if (utf8Text(sample, cut)) return 'utf-8';
  return legacyText(sample) ? 'windows-1252' : null;
}

/** Decodes text in a detected encoding, without its BOM. */
export function decodeText(bytes: Uint8Array, encoding: TextEncoding): string {
  let start = 0;
  if (encoding === 'utf-8' && startsWith(bytes, [0xef, 0xbb, 0xbf])) start = 3;
  if (encoding === 'utf-16le' && startsWith(bytes, [0xff, 0xfe])) start = 2;
  if (encoding === 'utf-16be' && startsWith(bytes, [0xfe, 0xff])) start = 2;
  return decodeAs(bytes.subarray(start), encoding, false);
}

// workerd's TextDecoder is only sure to know UTF-8 and UTF-16LE; the other two are simple enough to do here.
const CP1252_HIGH =
  '\u20ac\ufffd\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\ufffd\u017d\ufffd' +
  '\ufffd\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\ufffd\u017e\u0178';

/** Decodes without BOM handling; `fatal` throws on malformed input. */
export function decodeAs(bytes: Uint8Array, encoding: TextEncoding, fatal: boolean): string {
  if (encoding === 'utf-8' || encoding === 'utf-16le') return new TextDecoder(encoding, { fatal, ignoreBOM: true }).decode(bytes);
  if (encoding === 'utf-16be') {
    const swapped = new Uint8Array(bytes.byteLength & ~1);
    for (let i = 0; i + 1 < bytes.byteLength; i += 2) {
      swapped[i] = bytes[i + 1]!;
      swapped[i + 1] = bytes[i]!;
    }
    if (fatal && bytes.byteLength % 2 === 1) throw new TypeError('odd length');
    return new TextDecoder('utf-16le', { fatal, ignoreBOM: true }).decode(swapped);
  }
  let out = '';
  for (let i = 0; i < bytes.byteLength; i += 8192) {
    const codes = Array.from(bytes.subarray(i, i + 8192), (b) => (b >= 0x80 && b < 0xa0 ? CP1252_HIGH.charCodeAt(b - 0x80) : b));
    out += String.fromCharCode(...codes);
  }
  return out;
}

/** Text has few control characters besides tab, line breaks, form feed and escape, and no NUL. */
export function fewControls(text: string): boolean {
  let bad = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0) return false;
    if ((c < 0x20 && c !== 9 && c !== 10 && c !== 11 && c !== 12 && c !== 13 && c !== 27) || c === 0x7f) bad++;
  }
  return bad <= text.length * 0.01;
}

function utf8Text(bytes: Uint8Array, cut: boolean): boolean {
  let end = bytes.byteLength;
  if (cut) {
    // Drop a sequence cut short by the end of the head.
    for (let back = 1; back <= 3 && back <= end; back++) {
      const b = bytes[end - back]!;
      if ((b & 0xc0) === 0x80) continue;
      const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
      if (need > back) end -= back;
      break;
    }
  }
  try {
    return fewControls(decodeAs(bytes.subarray(0, end), 'utf-8', true));
  } catch {
    return false;
  }
}

function utf16Text(bytes: Uint8Array, encoding: 'utf-16le' | 'utf-16be', cut: boolean): boolean {
  let end = bytes.byteLength;
  if (cut) {
    end -= end % 2;
    const hi = encoding === 'utf-16le' ? bytes[end - 1] : bytes[end - 2];
    if (end >= 2 && hi !== undefined && hi >= 0xd8 && hi <= 0xdb) end -= 2;
  }
  try {
    return fewControls(decodeAs(bytes.subarray(0, end), encoding, true));
  } catch {
    return false;
  }
}

/** UTF-16 without a BOM: mostly-ASCII text has a zero in every other byte, on one side only. */
function bomlessUtf16(bytes: Uint8Array): 'utf-16le' | 'utf-16be' | null {
  const n = Math.min(bytes.byteLength, 8192) & ~1;
  if (n < 4) return null;
  let evenZeros = 0;
  let oddZeros = 0;
  for (let i = 0; i < n; i += 2) {
    if (bytes[i] === 0) evenZeros++;
    if (bytes[i + 1] === 0) oddZeros++;
  }
  const pairs = n / 2;
  if (oddZeros > pairs * 0.4 && evenZeros < pairs * 0.05) return 'utf-16le';
  if (evenZeros > pairs * 0.4 && oddZeros < pairs * 0.05) return 'utf-16be';
  return null;
}

// Bytes windows-1252 leaves undefined: their presence means the data is not text in it.
const UNDEFINED_1252 = new Set([0x81, 0x8d, 0x8f, 0x90, 0x9d]);

function legacyText(bytes: Uint8Array): boolean {
  let high = 0;
  for (const b of bytes) {
    if (UNDEFINED_1252.has(b)) return false;
    if (b >= 0x80) high++;
  }
  // Western text in a legacy code page is mostly ASCII with scattered accented letters.
  return high <= bytes.byteLength * 0.3 && fewControls(decodeAs(bytes, 'windows-1252', false));
}
