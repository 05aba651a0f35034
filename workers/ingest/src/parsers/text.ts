import { decodeAs, detectTextEncoding, fewControls, type TextEncoding } from '#core/documents/text-encoding.ts';
import { MAX_BLOCK_CHARS } from '../chunking/placed-blocks.ts';
import { ParseBudget } from './budget.ts';
import { cutLongText } from './long-text.ts';
import { markdownBlocks } from './markdown.ts';
import { type Block, DEFAULT_PARSE_LIMITS, type ParsedDocument, ParseError, type ParseLimits } from './types.ts';

/**
 * Plain text and Markdown. Text must really be text: valid UTF-8 (or UTF-16 with a BOM)
 * without the control characters of binary data. Markdown keeps its structure (markdown.ts).
 */

/** Text past this many bytes is not read (a warning says so): a worker has 128 MB. */
export const MAX_TEXT_BYTES = 16 * 1024 * 1024;

const NOT_TEXT = 'The file is not valid text';

export interface DecodedText {
  text: string;
  encoding: TextEncoding;
  /** The file was longer than MAX_TEXT_BYTES and was cut there. */
  truncated: boolean;
}

/**
 * Decodes a whole text file. With `legacy`, text that is not UTF-8 is read as windows-1252
 * (what spreadsheet programs write on Windows); without, it is refused.
 */
export function decodeTextFile(bytes: Uint8Array, legacy: boolean): DecodedText {
  let encoding = detectTextEncoding(bytes, true);
  if (encoding === null || (encoding === 'windows-1252' && !legacy)) throw new ParseError('corrupt', NOT_TEXT);
  const truncated = bytes.byteLength > MAX_TEXT_BYTES;
  const data = truncated ? bytes.subarray(0, boundary(bytes, MAX_TEXT_BYTES, encoding)) : bytes;
  const bom = bomLength(data, encoding);
  let text: string;
  try {
    text = decodeAs(data.subarray(bom), encoding, encoding !== 'windows-1252');
  } catch {
    // The head looked like UTF-8 but later bytes are not: a legacy file with accents further down.
    if (!legacy || encoding !== 'utf-8') throw new ParseError('corrupt', NOT_TEXT);
    encoding = 'windows-1252';
    text = decodeAs(data, encoding, false);
  }
  if (!fewControls(text)) throw new ParseError('corrupt', NOT_TEXT);
  return { text, encoding, truncated };
}

function bomLength(bytes: Uint8Array, encoding: TextEncoding): number {
  if (encoding === 'utf-8' && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 3;
  if (encoding === 'utf-16le' && bytes[0] === 0xff && bytes[1] === 0xfe) return 2;
  if (encoding === 'utf-16be' && bytes[0] === 0xfe && bytes[1] === 0xff) return 2;
  return 0;
}

/** The largest cut at or below `max` that does not split a character. */
function boundary(bytes: Uint8Array, max: number, encoding: TextEncoding): number {
  let end = max;
  if (encoding === 'utf-8') {
    while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  } else if (encoding === 'utf-16le' || encoding === 'utf-16be') {
    end -= end % 2;
    const high = encoding === 'utf-16le' ? bytes[end - 1]! : bytes[end - 2]!;
    if (high >= 0xd8 && high <= 0xdb) end -= 2;
  }
  return end;
}

export function truncationWarning(): string {
  return `Only the first ${MAX_TEXT_BYTES / 1024 / 1024} MB of the file were read`;
}

export function parseText(bytes: Uint8Array, kind: 'txt' | 'md', limits: ParseLimits = DEFAULT_PARSE_LIMITS): ParsedDocument {
  const { text, truncated } = decodeTextFile(bytes, false);
  if (text.trim() === '') throw new ParseError('empty', 'The document is empty');
  const budget = new ParseBudget(limits);
  const blocks: Block[] = [];
  budget.until(() => (kind === 'md' ? markdownBlocks(text, budget, blocks) : plainBlocks(text, budget, blocks)));
  if (blocks.length === 0) throw new ParseError('empty', 'The document is empty');
  return budget.finish({ blocks, images: [], warnings: truncated ? [truncationWarning()] : [] });
}

/**
 * Paragraphs are separated by blank lines; line breaks inside one are kept. A paragraph longer
 * than a block may be is cut into pieces first, each tidied alone and marked as reading on, so
 * that an 8 MB file of one paragraph is never copied whole.
 */
export function plainBlocks(text: string, budget: ParseBudget, blocks: Block[]): void {
  for (const chunk of text.split(/\r?\n[ \t\f\v]*(?:\r?\n[ \t\f\v]*)+|\r[ \t]*\r/)) {
    budget.work();
    let first = true;
    for (const piece of cutLongText(chunk, MAX_BLOCK_CHARS)) {
      const paragraph = piece
        .split(/\r\n|\r|\n/)
        .map((l) => l.trimEnd())
        .join('\n')
        .trim();
      const kept = paragraph === '' ? '' : budget.take(paragraph);
      if (kept === '') continue;
      blocks.push({ kind: 'paragraph', text: kept, ...(first ? {} : { continues: true }) });
      first = false;
    }
  }
}
