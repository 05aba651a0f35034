import { indexOfBytes } from '#core/bytes.ts';
import { detectUploadType } from '#core/documents/detect-type.ts';
import { decodeAs } from '#core/documents/text-encoding.ts';
import { BudgetSpent, ParseBudget } from './budget.ts';
import { properties } from './document-properties.ts';
import { htmlDocumentBlocks } from './html.ts';
import { type DocumentSource, parseDocument } from './index.ts';
import { plainBlocks } from './text.ts';
import {
  type Block,
  DEFAULT_PARSE_LIMITS,
  type ExtractedImage,
  type ParsedDocument,
  ParseError,
  type ParseLimits,
} from './types.ts';

/**
 * An email (RFC 5322 with MIME) → its subject as the title and first heading, its sender, recipients
 * and date as a line under it, its text body (text/plain, else text/html through the HTML reader;
 * quoted-printable and base64 decoded, multipart walked), and each attachment of an accepted format
 * read as a document of its own under a heading with its name. Parts are found in the bytes and
 * decoded one at a time; nesting (multiparts, forwarded messages, an email attached to an email) is
 * capped, as is the number of parts.
 */

/** Multiparts and messages nested at most; real mail nests three or four. */
export const MAX_MIME_DEPTH = 12;
/** Parts looked at, at most, across the whole message. */
export const MAX_MIME_PARTS = 1_000;
/** Emails attached to emails, read at most this deep. */
const MAX_ATTACHED_EMAILS = 3;

type Headers = Map<string, string>;
interface Part {
  headers: Headers;
  body: Uint8Array;
}

interface Walk {
  blocks: Block[];
  /** Images of attachments, when the caller does not take them as they come. */
  images: ExtractedImage[];
  warnings: Set<string>;
  budget: ParseBudget;
  limits: ParseLimits;
  source: DocumentSource;
  parts: number;
  unreadable: number;
  emailDepth: number;
}

const CRLF_CRLF = [13, 10, 13, 10];
const LF_LF = [10, 10];

export async function parseEml(
  bytes: Uint8Array,
  limits: ParseLimits = DEFAULT_PARSE_LIMITS,
  source: DocumentSource = {},
): Promise<ParsedDocument> {
  const message = splitPart(bytes);
  if (message.headers.size === 0) throw new ParseError('corrupt', 'The file is not an email message');
  const budget = new ParseBudget(limits);
  const walk: Walk = {
    blocks: [],
    images: [],
    warnings: new Set(),
    budget,
    limits,
    source,
    parts: 0,
    unreadable: 0,
    emailDepth: source.emailDepth ?? 0,
  };
  const subject = decodeWords(message.headers.get('subject') ?? '').trim();
  try {
    headerBlocks(message.headers, walk, 1);
    await readPart(message, walk, 0);
  } catch (error) {
    if (!(error instanceof BudgetSpent)) throw error;
  }
  if (walk.unreadable > 0) {
    walk.warnings.add(
      `${walk.unreadable} attachment${walk.unreadable === 1 ? ' is' : 's are'} of a type that cannot be read and ${walk.unreadable === 1 ? 'was' : 'were'} left out`,
    );
  }
  return budget.finish({
    blocks: walk.blocks,
    images: walk.images,
    warnings: [...walk.warnings],
    ...properties(subject, rfc5322Date(message.headers.get('date'))),
  });
}

/** The subject as a heading, then who wrote to whom and when, as one line a search can find. */
function headerBlocks(headers: Headers, walk: Walk, level: number): void {
  const subject = decodeWords(headers.get('subject') ?? '').trim();
  if (subject) walk.blocks.push({ kind: 'heading', text: walk.budget.take(subject), level });
  const line = ['from', 'to', 'cc', 'date']
    .map(
      (name) =>
        [
          name,
          decodeWords(headers.get(name) ?? '')
            .replace(/\s+/g, ' ')
            .trim(),
        ] as const,
    )
    .filter(([, value]) => value !== '')
    .map(([name, value]) => `${name[0]?.toUpperCase()}${name.slice(1)}: ${value}`)
    .join('; ');
  if (line) walk.blocks.push({ kind: 'paragraph', text: walk.budget.take(line) });
}

async function readPart(part: Part, walk: Walk, depth: number): Promise<void> {
  walk.budget.work();
  if (++walk.parts > MAX_MIME_PARTS) {
    walk.warnings.add(`The message has more than ${MAX_MIME_PARTS} parts; only the first ${MAX_MIME_PARTS} were read`);
    return;
  }
  if (depth > MAX_MIME_DEPTH) {
    walk.warnings.add(`Parts of the message nested more than ${MAX_MIME_DEPTH} deep were not read`);
    return;
  }
  const type = contentType(part.headers);
  const name = fileName(part.headers, type.params);
  const attached = /^\s*attachment/i.test(part.headers.get('content-disposition') ?? '');

  if (type.value.startsWith('multipart/')) {
    const boundary = type.params.boundary;
    if (!boundary) return;
    const children = multipartBodies(part.body, boundary).map(splitPart);
    if (type.value === 'multipart/alternative') {
      // The same content in several forms: the plain text if there is one, else the richest that can be read.
      const plain = children.find((child) => contentType(child.headers).value === 'text/plain');
      const chosen = plain ?? children.findLast((child) => /^(text\/html|multipart\/)/.test(contentType(child.headers).value));
      if (chosen) await readPart(chosen, walk, depth + 1);
      return;
    }
    for (const child of children) await readPart(child, walk, depth + 1);
    return;
  }
  if (type.value === 'message/rfc822' && !name) {
    const inner = splitPart(decodeBody(part));
    headerBlocks(inner.headers, walk, 2);
    await readPart(inner, walk, depth + 1);
    return;
  }
  if (!attached && !name && (type.value === 'text/plain' || type.value === 'text/html' || type.value === '')) {
    const text = decodeText(decodeBody(part), type.params.charset);
    if (type.value === 'text/html') walk.blocks.push(...htmlDocumentBlocks(text, walk.budget).blocks);
    else plainBlocks(text, walk.budget, walk.blocks);
    return;
  }
  if (name) await readAttachment(name, decodeBody(part), walk);
}

/** An attachment of an accepted format, parsed as a document of its own under a heading with its name. */
async function readAttachment(name: string, bytes: Uint8Array, walk: Walk): Promise<void> {
  const check = detectUploadType(name, bytes, true);
  if (!check.ok) {
    walk.unreadable++;
    return;
  }
  if (check.type === 'eml' && walk.emailDepth >= MAX_ATTACHED_EMAILS) {
    walk.warnings.add(`Emails attached more than ${MAX_ATTACHED_EMAILS} deep were not read`);
    return;
  }
  const used = walk.blocks.reduce((sum, block) => sum + block.text.length, 0);
  let doc: ParsedDocument;
  try {
    doc = await parseDocument(
      check.type,
      bytes,
      { ...walk.limits, charsBefore: (walk.limits.charsBefore ?? 0) + used },
      { onImage: walk.source.onImage, transferBytes: true, emailDepth: walk.emailDepth + 1 },
    );
  } catch (error) {
    if (!(error instanceof ParseError)) throw error;
    walk.warnings.add(`The attachment ${name} could not be read: ${error.message}`);
    return;
  }
  walk.blocks.push({ kind: 'heading', text: walk.budget.take(`Attachment: ${name}`), level: 1 });
  for (const block of doc.blocks) {
    // An attachment's pages are not the email's; its headings sit under the attachment's.
    const { page: _page, ...rest } = block;
    walk.blocks.push(block.kind === 'heading' ? { ...rest, level: Math.min(6, (block.level ?? 1) + 1) } : rest);
    walk.budget.count(block.text.length);
  }
  for (const image of doc.images) {
    const { page: _page, ...rest } = image;
    if (walk.source.onImage) await walk.source.onImage(rest);
    else walk.images.push(rest);
  }
  for (const warning of doc.warnings) walk.warnings.add(`${name}: ${warning}`);
}

// ---------------------------------------------------------------------------------------------
// MIME

/** Headers (unfolded, names lower-cased, the first of each kept) and the body after the blank line. */
function splitPart(bytes: Uint8Array): Part {
  const crlf = indexOfBytes(bytes, CRLF_CRLF);
  const lf = indexOfBytes(bytes, LF_LF);
  let end = bytes.byteLength;
  let bodyStart = bytes.byteLength;
  if (crlf !== -1 && (lf === -1 || crlf < lf)) [end, bodyStart] = [crlf, crlf + 4];
  else if (lf !== -1) [end, bodyStart] = [lf, lf + 2];
  const headers: Headers = new Map();
  // Headers are ASCII (RFC 5322); a stray 8-bit byte is read as Latin-1 rather than lost.
  const text = latin1(bytes.subarray(0, Math.min(end, 256 * 1024)));
  let current: string | null = null;
  for (const line of text.split(/\r?\n/)) {
    if (/^[ \t]/.test(line) && current !== null) {
      headers.set(current, `${headers.get(current)} ${line.trim()}`);
      continue;
    }
    const match = /^([!-9;-~]+):[ \t]*(.*)$/.exec(line);
    if (!match) {
      current = null;
      continue;
    }
    const field = (match[1] as string).toLowerCase();
    current = headers.has(field) ? null : field;
    if (current) headers.set(current, match[2] ?? '');
  }
  return { headers, body: bytes.subarray(bodyStart) };
}

function latin1(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.byteLength; i += 8192) out += String.fromCharCode(...bytes.subarray(i, i + 8192));
  return out;
}

/** A Content-Type's value (lower-cased; text/plain when absent) and its parameters. */
function contentType(headers: Headers): { value: string; params: Record<string, string> } {
  const raw = headers.get('content-type');
  if (raw === undefined) return { value: 'text/plain', params: {} };
  const [value = '', ...rest] = raw.split(';');
  return { value: value.trim().toLowerCase(), params: parameters(rest.join(';')) };
}

function parameters(text: string): Record<string, string> {
  const params: Record<string, string> = {};
  for (const match of text.matchAll(/([\w.*-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]*))/g)) {
    const key = (match[1] as string).toLowerCase();
    params[key] ??= (match[2] ?? match[3] ?? '').replace(/\\(.)/g, '$1');
  }
  return params;
}

/** The attachment's file name: Content-Disposition's filename (RFC 2231 or a quoted word), else Content-Type's name. */
function fileName(headers: Headers, typeParams: Record<string, string>): string | null {
  const disposition = parameters(headers.get('content-disposition')?.replace(/^[^;]*;?/, '') ?? '');
  const extended = disposition['filename*'];
  if (extended) {
    const value = extended.replace(/^[\w-]*'[\w-]*'/, '');
    try {
      return decodeURIComponent(value);
    } catch {
      return value;
    }
  }
  const name = disposition.filename ?? typeParams.name;
  return name ? decodeWords(name).trim() || null : null;
}

/** The bodies between a multipart's boundary lines, without the preamble and epilogue. */
function multipartBodies(body: Uint8Array, boundary: string): Uint8Array[] {
  const delimiter = Array.from(`--${boundary}`, (c) => c.charCodeAt(0) & 0xff);
  const bodies: Uint8Array[] = [];
  let start = -1;
  for (let at = indexOfBytes(body, delimiter); at !== -1; at = indexOfBytes(body, delimiter, at + delimiter.length)) {
    // A boundary counts only as a whole line ("--b1" is not "--b10"), perhaps closing ("--b1--").
    if (at > 0 && body[at - 1] !== 10) continue;
    const after = body[at + delimiter.length];
    if (after !== undefined && after !== 45 && after !== 13 && after !== 10 && after !== 32 && after !== 9) continue;
    if (start !== -1) {
      let end = at - 1;
      if (end > start && body[end - 1] === 13) end--;
      bodies.push(body.subarray(start, Math.max(start, end)));
    }
    const close = body[at + delimiter.length] === 45 && body[at + delimiter.length + 1] === 45;
    if (close) return bodies;
    const lineEnd = body.indexOf(10, at + delimiter.length);
    if (lineEnd === -1) return bodies;
    start = lineEnd + 1;
  }
  // No closing boundary (a message cut short): what follows the last boundary is a part too.
  if (start !== -1 && start < body.byteLength) bodies.push(body.subarray(start));
  return bodies;
}

/** The part's body with its transfer encoding undone. */
function decodeBody(part: Part): Uint8Array {
  const encoding = (part.headers.get('content-transfer-encoding') ?? '').trim().toLowerCase();
  if (encoding === 'base64') return decodeBase64(part.body);
  if (encoding === 'quoted-printable') return decodeQuotedPrintable(part.body);
  return part.body;
}

const BASE64 = new Int16Array(256).fill(-1);
for (const [i, c] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries())
  BASE64[c.charCodeAt(0)] = i;
BASE64[45] = 62; // '-' and '_' of the URL-safe alphabet
BASE64[95] = 63;

function decodeBase64(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(Math.floor((bytes.byteLength * 3) / 4) + 3);
  let bits = 0;
  let count = 0;
  let length = 0;
  for (const byte of bytes) {
    const value = BASE64[byte] as number;
    if (value < 0) {
      if (byte === 61) break; // '=': the padding ends the data
      continue; // line breaks and other characters outside the alphabet are skipped
    }
    bits = (bits << 6) | value;
    count += 6;
    if (count >= 8) {
      count -= 8;
      out[length++] = (bits >> count) & 0xff;
    }
  }
  return out.subarray(0, length);
}

const hexValue = (c: number | undefined) =>
  c === undefined ? -1 : c >= 48 && c <= 57 ? c - 48 : c >= 65 && c <= 70 ? c - 55 : c >= 97 && c <= 102 ? c - 87 : -1;

function decodeQuotedPrintable(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.byteLength);
  let length = 0;
  for (let i = 0; i < bytes.byteLength; i++) {
    const byte = bytes[i] as number;
    if (byte !== 61) {
      out[length++] = byte;
      continue;
    }
    // A soft line break ("=" at a line's end, perhaps after blanks) joins the lines.
    let j = i + 1;
    while (bytes[j] === 32 || bytes[j] === 9) j++;
    if (bytes[j] === 13 && bytes[j + 1] === 10) {
      i = j + 1;
      continue;
    }
    if (bytes[j] === 10) {
      i = j;
      continue;
    }
    const high = hexValue(bytes[i + 1]);
    const low = hexValue(bytes[i + 2]);
    if (high >= 0 && low >= 0) {
      out[length++] = high * 16 + low;
      i += 2;
    } else {
      out[length++] = byte;
    }
  }
  return out.subarray(0, length);
}

/** Text in a MIME charset; workerd's TextDecoder is only sure of UTF-8 and UTF-16LE, so the Latin ones are done here. */
function decodeText(bytes: Uint8Array, charset = 'utf-8'): string {
  const label = charset.trim().toLowerCase();
  if (/^(iso-8859-1|iso-8859-15|latin1|windows-1252|cp1252)$/.test(label)) return decodeAs(bytes, 'windows-1252', false);
  if (label === 'utf-16be') return decodeAs(bytes, 'utf-16be', false);
  try {
    return new TextDecoder(/^(us-)?ascii$/.test(label) ? 'utf-8' : label).decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

/** RFC 2047 encoded words in a header (`=?utf-8?Q?Caf=C3=A9?=`), decoded; blanks between two are dropped. */
export function decodeWords(value: string): string {
  return value
    .replace(/(=\?[^?\s]+\?[bBqQ]\?[^?\s]*\?=)\s+(?==\?)/g, '$1')
    .replace(/=\?([^?\s]+)\?([bBqQ])\?([^?\s]*)\?=/g, (_whole, charset: string, kind: string, text: string) => {
      const raw = Uint8Array.from(text, (c) => c.charCodeAt(0) & 0xff);
      const bytes = kind.toLowerCase() === 'b' ? decodeBase64(raw) : decodeQuotedPrintable(raw.map((b) => (b === 95 ? 32 : b)));
      return decodeText(bytes, charset.replace(/\*.*$/, ''));
    });
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** "Fri, 23 Dec 2022 12:08:48 -0600" → 2022-12-23: the day as the sender's clock had it. */
function rfc5322Date(value: string | undefined): string | undefined {
  const match = /(\d{1,2})\s+([A-Za-z]{3})[a-z]*\s+(\d{4})/.exec(value ?? '');
  if (!match) return value && /^\s*\d{4}-\d{2}-\d{2}/.test(value) ? value.trim() : undefined;
  const month = MONTHS.indexOf((match[2] as string).toLowerCase());
  if (month === -1) return undefined;
  return `${match[3]}-${String(month + 1).padStart(2, '0')}-${(match[1] as string).padStart(2, '0')}`;
}
