import { decodeAs, detectTextEncoding, fewControls, type TextEncoding } from '#core/documents/text-encoding.ts';
import { gridBlocks } from './table-rows.ts';
import type { Block, ParsedDocument } from './types.ts';
import { ParseError } from './types.ts';

/**
 * Plain text and Markdown. Text must really be text: valid UTF-8 (or UTF-16 with a BOM)
 * without the control characters of binary data. Markdown keeps its structure: headings,
 * list items, tables as header-keyed rows; fenced code stays verbatim as a paragraph.
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

export function parseText(bytes: Uint8Array, kind: 'txt' | 'md'): ParsedDocument {
  const { text, truncated } = decodeTextFile(bytes, false);
  if (text.trim() === '') throw new ParseError('empty', 'The document is empty');
  const blocks = kind === 'md' ? markdownBlocks(text) : plainBlocks(text);
  if (blocks.length === 0) throw new ParseError('empty', 'The document is empty');
  return { blocks, images: [], warnings: truncated ? [truncationWarning()] : [] };
}

/** Paragraphs are separated by blank lines; line breaks inside one are kept. */
function plainBlocks(text: string): Block[] {
  const blocks: Block[] = [];
  for (const chunk of text.split(/\r?\n[ \t\f\v]*(?:\r?\n[ \t\f\v]*)+|\r[ \t]*\r/)) {
    const paragraph = chunk
      .split(/\r\n|\r|\n/)
      .map((l) => l.trimEnd())
      .join('\n')
      .trim();
    if (paragraph !== '') blocks.push({ kind: 'paragraph', text: paragraph });
  }
  return blocks;
}

// ---------------------------------------------------------------------------------------------
// Markdown

const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const THEMATIC = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const LIST = /^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(.*)$/;
const QUOTE = /^ {0,3}> ?/;
const TABLE_DELIMITER = /^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;

/** Inline markup that adds nothing to the words: links keep their text, images their alt text. */
export function stripInline(text: string): string {
  return text
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\[[^\]]*\]/g, '$1')
    .replace(/(\*\*|__)(?=\S)(.+?)(?<=\S)\1/g, '$2')
    .replace(/`+([^`]+?)`+/g, '$1')
    .replace(/\\([\\`*_{}[\]()#+\-.!|>~])/g, '$1')
    .trim();
}

function splitRow(line: string): string[] {
  const trimmed = line
    .trim()
    .replace(/^\|/, '')
    .replace(/(?<!\\)\|$/, '');
  return trimmed.split(/(?<!\\)\|/).map((c) => stripInline(c.replace(/\\\|/g, '|')));
}

function markdownBlocks(text: string): Block[] {
  const lines = text.split(/\r\n|\r|\n/);
  const blocks: Block[] = [];
  let open: { kind: 'paragraph' | 'list_item'; lines: string[] } | null = null;
  const flush = () => {
    if (open) {
      const joined = stripInline(open.lines.map((l) => l.trim()).join(' '));
      if (joined !== '') blocks.push({ kind: open.kind, text: joined });
    }
    open = null;
  };

  let i = 0;
  // YAML front matter: metadata such as a title, kept as one paragraph.
  if (/^---[ \t]*$/.test(lines[0] ?? '')) {
    const end = lines.findIndex((l, j) => j > 0 && j < 200 && /^(---|\.\.\.)[ \t]*$/.test(l));
    if (end > 0) {
      const meta = lines.slice(1, end).join('\n').trim();
      if (meta !== '') blocks.push({ kind: 'paragraph', text: meta });
      i = end + 1;
    }
  }

  for (; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === '') {
      flush();
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const marker = fence[1]!;
      const closing = new RegExp(`^ {0,3}${marker[0] === '`' ? '`' : '~'}{${marker.length},}[ \\t]*$`);
      const code: string[] = [];
      for (i++; i < lines.length && !closing.test(lines[i]!); i++) code.push(lines[i]!);
      const body = code.join('\n').trim();
      if (body !== '') blocks.push({ kind: 'paragraph', text: body });
      continue;
    }
    const atx = ATX.exec(line);
    if (atx) {
      flush();
      const title = stripInline(atx[2] ?? '');
      if (title !== '') blocks.push({ kind: 'heading', text: title, level: atx[1]!.length });
      continue;
    }
    const current = open as { kind: 'paragraph' | 'list_item'; lines: string[] } | null;
    if (current?.kind === 'paragraph' && /^ {0,3}(=+|-+)[ \t]*$/.test(line)) {
      // Setext heading: the paragraph above is its text.
      const title = stripInline(current.lines.map((l) => l.trim()).join(' '));
      open = null;
      if (title !== '') blocks.push({ kind: 'heading', text: title, level: line.trim().startsWith('=') ? 1 : 2 });
      continue;
    }
    if (THEMATIC.test(line)) {
      flush();
      continue;
    }
    if (line.includes('|') && TABLE_DELIMITER.test(lines[i + 1] ?? '') && (lines[i + 1] ?? '').includes('-')) {
      flush();
      const rows = [splitRow(line)];
      for (i += 2; i < lines.length && lines[i]!.includes('|') && lines[i]!.trim() !== ''; i++) rows.push(splitRow(lines[i]!));
      i--;
      blocks.push(...gridBlocks(rows));
      continue;
    }
    const item = LIST.exec(line);
    if (item) {
      flush();
      open = { kind: 'list_item', lines: [item[1]!] };
      continue;
    }
    const content = line.replace(QUOTE, '');
    if (open) open.lines.push(content);
    else open = { kind: 'paragraph', lines: [content] };
  }
  flush();
  return blocks;
}
