import { indexOfBytes, startsWith } from '../bytes.ts';
import type { DocType } from '../contracts/doc-types.ts';
import type { UploadExtension } from '../limits.ts';
import { looksLikeJson, looksLikeJsonLines } from './json-shape.ts';
import { decodeText, detectTextEncoding, type TextEncoding } from './text-encoding.ts';
import { looksLikeZip } from './zip-format.ts';
import { listZipHead, readHeadEntryText } from './zip-head.ts';

export { DOC_TYPES, type DocType } from '../contracts/doc-types.ts';

/**
 * What a file is, decided from its name and its bytes. The API calls this on upload with
 * the first bytes of a streamed body (a head of at most 64 KiB), the ingest worker on the
 * whole file; both must agree, so neither trusts the extension or the declared MIME type.
 */

export type OoxmlType = 'docx' | 'pptx' | 'xlsx';
/** ZIP packages that name their kind in a first entry called `mimetype`: OpenDocument and EPUB. */
export type MimetypePackage = 'odt' | 'ods' | 'odp' | 'epub';
export type ImageType = 'png' | 'jpeg' | 'webp';

export const CONTENT_TYPES: Record<DocType, string> = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  csv: 'text/csv',
  txt: 'text/plain',
  md: 'text/markdown',
  html: 'text/html',
  png: 'image/png',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  json: 'application/json',
  jsonl: 'application/jsonl',
  epub: 'application/epub+zip',
  odt: 'application/vnd.oasis.opendocument.text',
  ods: 'application/vnd.oasis.opendocument.spreadsheet',
  odp: 'application/vnd.oasis.opendocument.presentation',
  eml: 'message/rfc822',
};

/**
 * The type a server means by a Content-Type: each of CONTENT_TYPES read backwards, and the other names
 * servers use for the same formats.
 */
export const TYPE_BY_MEDIA: Record<string, DocType> = {
  ...Object.fromEntries(Object.entries(CONTENT_TYPES).map(([type, media]) => [media, type as DocType])),
  'application/xhtml+xml': 'html',
  'text/x-markdown': 'md',
  'text/json': 'json',
  'application/x-ndjson': 'jsonl',
  'application/x-jsonlines': 'jsonl',
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
  /** A ZIP whose `mimetype` entry names an OpenDocument or EPUB. */
  | { kind: 'package'; type: MimetypePackage }
  | { kind: 'image'; type: ImageType }
  /** An OLE2 compound file: a legacy .doc/.xls/.ppt, or an encrypted OOXML document. */
  | { kind: 'cfb' }
  | { kind: 'text'; encoding: TextEncoding }
  | { kind: 'binary'; format: string | null };

export type UploadCheck = { ok: true; type: DocType; contentType: string } | { ok: false; reason: string };

const EXTENSIONS: Record<UploadExtension, DocType> = {
  pdf: 'pdf',
  docx: 'docx',
  pptx: 'pptx',
  xlsx: 'xlsx',
  csv: 'csv',
  txt: 'txt',
  md: 'md',
  markdown: 'md',
  html: 'html',
  htm: 'html',
  png: 'png',
  jpg: 'jpeg',
  jpeg: 'jpeg',
  webp: 'webp',
  json: 'json',
  jsonl: 'jsonl',
  ndjson: 'jsonl',
  epub: 'epub',
  odt: 'odt',
  ods: 'ods',
  odp: 'odp',
  eml: 'eml',
};

const LABELS: Record<DocType, string> = {
  pdf: 'a PDF document',
  docx: 'a Word document',
  pptx: 'a PowerPoint presentation',
  xlsx: 'an Excel workbook',
  csv: 'a CSV file',
  txt: 'a text file',
  md: 'a Markdown file',
  html: 'an HTML page',
  png: 'a PNG image',
  jpeg: 'a JPEG image',
  webp: 'a WebP image',
  json: 'a JSON file',
  jsonl: 'a JSON Lines file',
  epub: 'an EPUB book',
  odt: 'an OpenDocument text',
  ods: 'an OpenDocument spreadsheet',
  odp: 'an OpenDocument presentation',
  eml: 'an email message',
};

/** The formats an upload may be in, as the refusals name them. */
export const SUPPORTED_FORMATS =
  'PDF, DOCX, PPTX, XLSX, ODT, ODS, ODP, EPUB, CSV, TXT, MD, HTML, JSON, JSONL, EML, PNG, JPEG or WebP';
const SUPPORTED = `upload a ${SUPPORTED_FORMATS} file`;

function extensionOf(filename: string): string | null {
  const base = filename.split(/[/\\]/).pop()?.trim().replace(/\.+$/, '') ?? '';
  const dot = base.lastIndexOf('.');
  return dot <= 0 && !base.startsWith('.') ? null : base.slice(dot + 1).toLowerCase();
}

/** The type an upload's name claims. */
export function typeFromExtension(filename: string): DocType | null {
  const ext = extensionOf(filename);
  return ext !== null && Object.hasOwn(EXTENSIONS, ext) ? EXTENSIONS[ext as UploadExtension] : null;
}

const IMAGE_MAGIC: [ImageType, number[]][] = [
  ['png', [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]],
  ['jpeg', [0xff, 0xd8, 0xff]],
];
const RIFF = [0x52, 0x49, 0x46, 0x46];
const WEBP = [0x57, 0x45, 0x42, 0x50];

const MAGIC: [string, number[]][] = [
  ['a GIF image', [0x47, 0x49, 0x46, 0x38]],
  ['a Windows executable', [0x4d, 0x5a]],
  ['an ELF executable', [0x7f, 0x45, 0x4c, 0x46]],
  ['a gzip archive', [0x1f, 0x8b]],
  ['a RAR archive', [0x52, 0x61, 0x72, 0x21]],
  ['a 7-Zip archive', [0x37, 0x7a, 0xbc, 0xaf]],
];

const PDF_MAGIC = [0x25, 0x50, 0x44, 0x46, 0x2d];
const CFB_MAGIC = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];

/** An OLE2 compound file: a legacy .doc/.xls/.ppt, or an encrypted OOXML document. */
export const isCompoundFile = (bytes: Uint8Array) => startsWith(bytes, CFB_MAGIC);

/** Sniffs a file's head (or, with `complete`, the whole file). */
export function sniffType(head: Uint8Array, opts: { complete?: boolean } = {}): Sniffed {
  const complete = opts.complete ?? false;
  if (startsWith(head, PDF_MAGIC)) return { kind: 'pdf' };
  if (looksLikeZip(head)) return sniffZip(head, complete);
  if (isCompoundFile(head)) return { kind: 'cfb' };
  const image = IMAGE_MAGIC.find(([, magic]) => startsWith(head, magic))?.[0];
  if (image) return { kind: 'image', type: image };
  if (startsWith(head, RIFF) && startsWith(head, WEBP, 8)) return { kind: 'image', type: 'webp' };
  const encoding = detectTextEncoding(head, complete);
  if (encoding) return { kind: 'text', encoding };
  // Readers accept a PDF header anywhere in the first KiB (some generators prepend junk).
  if (indexOfBytes(head.subarray(0, 1024), PDF_MAGIC) !== -1) return { kind: 'pdf' };
  return { kind: 'binary', format: MAGIC.find(([, magic]) => startsWith(head, magic))?.[0] ?? null };
}

/** Decides an upload's type from its name and head; `complete` says the head is the whole file. */
export function detectUploadType(filename: string, head: Uint8Array, complete: boolean): UploadCheck {
  const ext = extensionOf(filename);
  const type = typeFromExtension(filename);
  if (!type) {
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
    case 'odt':
    case 'ods':
    case 'odp':
    case 'epub':
      if (sniffed.kind === 'package') return sniffed.type === type ? ok : mismatch();
      if (sniffed.kind === 'zip' && !sniffed.conclusive) return ok;
      return mismatch();
    case 'png':
    case 'jpeg':
    case 'webp':
      return sniffed.kind === 'image' && sniffed.type === type ? ok : mismatch();
    case 'csv':
      return sniffed.kind === 'text' ? ok : mismatch();
    case 'txt':
    case 'md':
      return sniffed.kind === 'text' && sniffed.encoding !== 'windows-1252' ? ok : mismatch();
    case 'html':
    case 'json':
    case 'jsonl':
    case 'eml': {
      if (sniffed.kind !== 'text') return mismatch();
      const text = decodeText(head, sniffed.encoding);
      if (textFormat(type, text, complete)) return ok;
      const seen = TEXT_FORMATS.find((other) => other !== type && textFormat(other, text, complete));
      return {
        ok: false,
        reason: `The file's content does not match its .${ext} extension: it looks like ${seen ? LABELS[seen] : describe(sniffed)}, not ${LABELS[type]}`,
      };
    }
  }
}

const TEXT_FORMATS = ['json', 'jsonl', 'html', 'eml'] as const;
type TextFormat = (typeof TEXT_FORMATS)[number];

/** Whether text (a head unless `complete`) reads as this format; each is told by its own start. */
function textFormat(type: TextFormat, text: string, complete: boolean): boolean {
  switch (type) {
    case 'json':
      return looksLikeJson(text, complete);
    case 'jsonl':
      return looksLikeJsonLines(text, complete);
    case 'html':
      return looksLikeHtml(text);
    case 'eml':
      return looksLikeEmail(text);
  }
}

// A tag HTML starts with, after any XML declaration, doctype-free comments and blanks.
const HTML_START =
  /^\s*(?:<\?xml[^>]{0,200}>\s*)?(?:<!--[\s\S]{0,4000}?-->\s*)*<(?:!doctype\s+html|html|head|body|meta|title|link|style|script|base|div|p|h[1-6]|table|section|article|main|header|nav|span|a|ul|ol|br|img|form|pre)[\s>/]/i;

function looksLikeHtml(text: string): boolean {
  return HTML_START.test(text.slice(0, 8192));
}

// A header field: a name of printable characters but the colon, then a colon (RFC 5322 §2.2).
const HEADER_FIELD = /^([!-9;-~]+):/;
const MESSAGE_FIELDS = new Set([
  'from',
  'to',
  'subject',
  'date',
  'message-id',
  'mime-version',
  'received',
  'return-path',
  'sender',
]);

/** A message starts with header fields (folded lines allowed) up to a blank line, and names at least two message fields. */
function looksLikeEmail(text: string): boolean {
  let known = 0;
  for (const line of text
    .slice(0, 64 * 1024)
    .split(/\r?\n/)
    .slice(0, 500)) {
    if (line === '') break;
    if (/^[ \t]/.test(line)) continue;
    const field = HEADER_FIELD.exec(line)?.[1]?.toLowerCase();
    if (!field) return false;
    if (MESSAGE_FIELDS.has(field)) known++;
  }
  return known >= 2;
}

function describe(sniffed: Sniffed): string {
  switch (sniffed.kind) {
    case 'pdf':
      return LABELS.pdf;
    case 'ooxml':
      return LABELS[sniffed.type];
    case 'zip':
      return 'a ZIP archive';
    case 'package':
    case 'image':
      return LABELS[sniffed.type];
    case 'cfb':
      return 'a legacy binary Office file';
    case 'text':
      return sniffed.encoding === 'windows-1252' ? 'text that is not UTF-8' : 'plain text';
    case 'binary':
      return sniffed.format ?? 'binary data';
  }
}

// ---------------------------------------------------------------------------------------------
// OOXML

/** The content type an Office package declares for its main part, by format (macro-enabled and template forms included). */
export const MAIN_CONTENT_TYPES: Record<OoxmlType, RegExp> = {
  docx: /wordprocessingml\.(document|template)\.main\+xml|ms-word\.(document|template)\.macroEnabled/i,
  pptx: /presentationml\.(presentation|slideshow|template)\.main\+xml|ms-powerpoint\.(presentation|slideshow|template)\.macroEnabled/i,
  xlsx: /spreadsheetml\.(sheet|template)\.main\+xml|ms-excel\.(sheet|template)\.macroEnabled\.main/i,
};
const OOXML_TYPES = Object.keys(MAIN_CONTENT_TYPES) as OoxmlType[];

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

const CONTENT_TYPES_CAP = 512 * 1024;

const PACKAGE_MIMETYPES: Record<string, MimetypePackage> = {
  'application/vnd.oasis.opendocument.text': 'odt',
  'application/vnd.oasis.opendocument.text-template': 'odt',
  'application/vnd.oasis.opendocument.spreadsheet': 'ods',
  'application/vnd.oasis.opendocument.spreadsheet-template': 'ods',
  'application/vnd.oasis.opendocument.presentation': 'odp',
  'application/vnd.oasis.opendocument.presentation-template': 'odp',
  'application/epub+zip': 'epub',
};

/** The package kind a ZIP's `mimetype` entry names; the specifications put it first, stored, but not every writer does. */
export function packageOfMimetype(text: string): MimetypePackage | undefined {
  return PACKAGE_MIMETYPES[text.trim().toLowerCase()];
}

function sniffZip(bytes: Uint8Array, complete: boolean): Sniffed {
  // A head that ends with a consistent central directory is the whole file, whatever the caller knew.
  const { entries, whole } = listZipHead(bytes);
  const conclusive = complete || whole;
  const mimetype = entries.find((e) => e.name === 'mimetype');
  if (mimetype) {
    const type = packageOfMimetype(readHeadEntryText(bytes, mimetype, 256).text);
    if (type) return { kind: 'package', type };
  }
  const contentTypes = entries.find((e) => e.name.toLowerCase() === '[content_types].xml');
  if (contentTypes) {
    const { text, finished } = readHeadEntryText(bytes, contentTypes, CONTENT_TYPES_CAP);
    const type = OOXML_TYPES.find((t) => MAIN_CONTENT_TYPES[t].test(text));
    if (type) return { kind: 'ooxml', type };
    if (finished) return { kind: 'zip', conclusive: true };
  }
  // Every Office document has [Content_Types].xml; in a whole file its absence settles it.
  if (conclusive) return { kind: 'zip', conclusive: true };

  const names = entries.map((e) => e.name.toLowerCase());
  for (const [part, type] of MAIN_PARTS) if (names.includes(part)) return { kind: 'ooxml', type };
  for (const [prefix, type] of PART_PREFIXES) if (names.some((n) => n.startsWith(prefix))) return { kind: 'ooxml', type };
  return { kind: 'zip', conclusive: false };
}
