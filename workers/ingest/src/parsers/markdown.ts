import type { ParseBudget } from './budget.ts';
import { cutLongText } from './long-text.ts';
import { stripInline } from './markdown-inline.ts';
import { gridBlocks } from './table-rows.ts';
import type { Block } from './types.ts';

/**
 * Markdown's block structure: headings, list items, tables as header-keyed rows; fenced code
 * stays verbatim as a paragraph. Every line is matched in time linear in its length: the block
 * syntax is read by hand or by regexes with no two quantifiers that can trade characters (the
 * heading regex this replaces took 6.6 s on a 2 KB line). A line longer than MAX_LINE_CHARS is
 * plain text, and a paragraph is closed at MAX_PARAGRAPH_CHARS, so no match ever sees more.
 */

export const MAX_LINE_CHARS = 16 * 1024;
export const MAX_PARAGRAPH_CHARS = 64 * 1024;

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const SETEXT = /^ {0,3}(=+|-+)[ \t]*$/;
const LIST = /^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+/;
const QUOTE = /^ {0,3}> ?/;
const DELIMITER_CELL = /^:?-+:?$/;

const isBlank = (char: string | undefined) => char === ' ' || char === '\t';

/** Up to three spaces of indent, as block syntax allows. */
function indent(line: string): number {
  let i = 0;
  while (i < 3 && line[i] === ' ') i++;
  return i;
}

/**
 * An ATX heading (`## Title ##`): its level and text, or null. The text starts after the blanks
 * that follow the opening #s and ends before trailing blanks and a closing run of #s that a
 * blank inside the text precedes, as the regex `^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`
 * read it, in one pass instead of its cubic backtracking.
 */
export function atxHeading(line: string): { level: number; text: string } | null {
  const start = indent(line);
  let level = 0;
  while (line[start + level] === '#') level++;
  if (level < 1 || level > 6) return null;
  let from = start + level;
  if (from < line.length && !isBlank(line[from])) return null;
  while (from < line.length && isBlank(line[from])) from++;
  let end = line.length;
  while (end > from && isBlank(line[end - 1])) end--;
  let hashes = end;
  while (hashes > from && line[hashes - 1] === '#') hashes--;
  if (hashes < end && hashes > from && isBlank(line[hashes - 1])) {
    end = hashes;
    while (end > from && isBlank(line[end - 1])) end--;
  }
  return { level, text: line.slice(from, end) };
}

/** A thematic break: three or more of one of `-`, `*`, `_`, with only spaces or tabs between. */
export function isThematicBreak(line: string): boolean {
  const start = indent(line);
  const mark = line[start];
  if (mark !== '-' && mark !== '*' && mark !== '_') return false;
  let marks = 0;
  for (let i = start; i < line.length; i++) {
    if (line[i] === mark) marks++;
    else if (!isBlank(line[i])) return false;
  }
  return marks >= 3;
}

/** A table's delimiter row (`| :--- | --: |`): cells of dashes, with optional colons and outer pipes. */
export function isDelimiterRow(line: string): boolean {
  let row = line.trim();
  if (!row.includes('-') || /[^-:| \t]/.test(row)) return false;
  if (row.startsWith('|')) row = row.slice(1);
  if (row.endsWith('|')) row = row.slice(0, -1);
  return row.split('|').every((cell) => DELIMITER_CELL.test(cell.trim()));
}

function splitRow(line: string): string[] {
  const trimmed = line
    .trim()
    .replace(/^\|/, '')
    .replace(/(?<!\\)\|$/, '');
  return trimmed.split(/(?<!\\)\|/).map((c) => stripInline(c.replace(/\\\|/g, '|')));
}

/** Appends the blocks of a Markdown text to `blocks` (so that what was read stays when the budget stops it). */
export function markdownBlocks(text: string, budget: ParseBudget, blocks: Block[]): void {
  const lines = text.split(/\r\n|\r|\n/);
  let open: { kind: 'paragraph' | 'list_item'; lines: string[]; chars: number; continues?: true } | null = null;
  const push = (block: Block) => {
    const kept = budget.take(block.text);
    if (kept !== '') blocks.push({ ...block, text: kept });
  };
  const flush = () => {
    if (open) {
      const joined = stripInline(open.lines.map((l) => l.trim()).join(' '));
      if (joined !== '') push({ kind: open.kind, text: joined, ...(open.continues ? { continues: true } : {}) });
    }
    open = null;
  };
  const add = (line: string) => {
    if (open && open.chars + line.length > MAX_PARAGRAPH_CHARS) {
      // The rest of a paragraph closed for its size reads on from it, as a cut wall of text does.
      const kind = open.kind;
      flush();
      open = { kind, lines: [], chars: 0, continues: true };
    }
    if (open) open.lines.push(line);
    else open = { kind: 'paragraph', lines: [line], chars: 0 };
    open.chars += line.length;
  };

  let i = 0;
  // YAML front matter: metadata such as a title, kept as one paragraph.
  if (/^---[ \t]*$/.test(lines[0] ?? '')) {
    const end = lines.slice(0, 200).findIndex((l, j) => j > 0 && /^(---|\.\.\.)[ \t]*$/.test(l));
    if (end > 0) {
      const meta = lines.slice(1, end).join('\n').trim();
      if (meta !== '') push({ kind: 'paragraph', text: meta });
      i = end + 1;
    }
  }

  for (; i < lines.length; i++) {
    budget.work();
    const line = lines[i]!;
    if (line.length > MAX_LINE_CHARS) {
      // Each cut looks back from its limit no further than its piece's start: `lastIndexOf` ran on
      // to the line's start when no space was near, quadratic (a 16 MB line without one took 8 s).
      for (const piece of cutLongText(line, MAX_LINE_CHARS)) add(piece);
      continue;
    }
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
      for (i++; i < lines.length && !closing.test(lines[i]!); i++) {
        budget.work();
        code.push(lines[i]!);
      }
      const body = code.join('\n').trim();
      if (body !== '') push({ kind: 'paragraph', text: body });
      continue;
    }
    const atx = atxHeading(line);
    if (atx) {
      flush();
      const title = stripInline(atx.text);
      if (title !== '') push({ kind: 'heading', text: title, level: atx.level });
      continue;
    }
    const current = open as { kind: 'paragraph' | 'list_item'; lines: string[] } | null;
    if (current?.kind === 'paragraph' && SETEXT.test(line)) {
      // Setext heading: the paragraph above is its text.
      const title = stripInline(current.lines.map((l) => l.trim()).join(' '));
      open = null;
      if (title !== '') push({ kind: 'heading', text: title, level: line.trim().startsWith('=') ? 1 : 2 });
      continue;
    }
    if (isThematicBreak(line)) {
      flush();
      continue;
    }
    const next = lines[i + 1] ?? '';
    if (line.includes('|') && next.length <= MAX_LINE_CHARS && isDelimiterRow(next)) {
      flush();
      const rows = [splitRow(line)];
      for (
        i += 2;
        i < lines.length && lines[i]!.includes('|') && lines[i]!.trim() !== '' && lines[i]!.length <= MAX_LINE_CHARS;
        i++
      ) {
        budget.work();
        rows.push(splitRow(lines[i]!));
      }
      i--;
      for (const block of gridBlocks(rows, budget)) blocks.push(block);
      continue;
    }
    const item = LIST.exec(line);
    if (item) {
      flush();
      open = { kind: 'list_item', lines: [line.slice(item[0].length)], chars: line.length };
      continue;
    }
    add(line.replace(QUOTE, ''));
  }
  flush();
}
