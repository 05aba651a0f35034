import { indexOfBytes, startsWith } from '../bytes.ts';
import type { UploadExtension } from '../limits.ts';
import { detectTextEncoding, type TextEncoding } from './text-encoding.ts';
import { listZipHead, looksLikeZip, readHeadEntryText } from './zip.ts';

/**
 * What a file is, decided from its name and its bytes. The API calls this on upload with
 * the first bytes of a streamed body (a head of at most 64 KiB), the ingest worker on the
 * whole file; both must agree, so neither trusts the extension or the declared MIME type.
 */

export type DocType = 'pdf' | 'docx' | 'pptx' | 'xlsx' | 'csv' | 'txt' | 'md' | 'html';
export type OoxmlType = 'docx' | 'pptx' | 'xlsx';

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

const EXTENSIONS: Record<UploadExtension, DocType> = {
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
  return ext !== null && Object.hasOwn(EXTENSIONS, ext) ? EXTENSIONS[ext as UploadExtension] : null;
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

function sniffZip(bytes: Uint8Array, complete: boolean): Sniffed {
  // A head that ends with a consistent central directory is the whole file, whatever the caller knew.
  const { entries, whole } = listZipHead(bytes);
  const conclusive = complete || whole;
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
