/**
 * Tables in passage text, read back so the extractive engine can quote a row as a Markdown table. The ingest
 * parsers write a table one row per line in one of two forms, and this reads only those, conservatively: a
 * misread table would put words in columns they never stood in.
 *
 *   Team: Blues; Cups: 1      header-keyed rows (CSV, XLSX, DOCX, PPTX, HTML, Markdown): every row names its columns
 *   Blues | 1                 cells a PDF page lines up, the table's first line its header; Markdown's
 *                             `| a | b |` with its delimiter row reads the same way
 */

export interface TableRow {
  /** The line its table starts on: with the passage, which table the row belongs to. */
  table: number;
  header: readonly string[];
  cells: readonly string[];
}

/** What a line of a recognised table is: a row to quote, or the header and delimiter lines that only frame them. */
export type TableLine = { kind: 'row'; row: TableRow } | { kind: 'frame' };

// The name of a keyed cell ends at its first ": "; a value may hold more of them ("Note: Warning: hot").
const KEYED_CELL = /^([^:;|]+?): (.+)$/u;
const DELIMITER_CELL = /^:?-{3,}:?$/u;

function keyedCells(line: string): { names: string[]; values: string[] } | undefined {
  const parts = line.split('; ');
  if (parts.length < 2) return undefined;
  const names: string[] = [];
  const values: string[] = [];
  for (const part of parts) {
    const match = KEYED_CELL.exec(part);
    if (!match) return undefined;
    names.push((match[1] as string).trim());
    values.push((match[2] as string).trim());
  }
  return { names, values };
}

function pipeCells(line: string): string[] | undefined {
  const outer = line.startsWith('|') && line.endsWith('|') && line.length > 1;
  if (!outer && !line.includes(' | ')) return undefined;
  const inner = outer ? line.slice(1, -1) : line;
  const cells = inner.split('|').map((cell) => cell.trim());
  return cells.length >= 2 ? cells : undefined;
}

const isDelimiter = (cells: readonly string[]) => cells.every((cell) => DELIMITER_CELL.test(cell));

// Without a delimiter row under it, a first line is taken for a header only when every cell has a word in it: a
// data row at the top of a passage (a table the chunk cut into) has a bare figure or an empty cell, as a rule.
const looksLikeHeader = (cells: readonly string[]) => cells.every((cell) => /\p{L}/u.test(cell));

/** The consecutive lines from `start` on that `read` takes and that `fits` the first of them. */
function runFrom<T>(
  lines: readonly string[],
  start: number,
  read: (line: string) => T | undefined,
  fits: (first: T, next: T) => boolean,
): T[] {
  const first = read(lines[start] ?? '');
  if (first === undefined) return [];
  const run = [first];
  for (
    let next = read(lines[start + 1] ?? '');
    next !== undefined && fits(first, next);
    next = read(lines[start + run.length] ?? '')
  ) {
    run.push(next);
  }
  return run;
}

/**
 * The table lines among a passage's lines (trimmed), by index. A table is two or more consecutive rows keyed by
 * the same column names, or a run of lines of the same number of `|`-separated cells under a header line.
 */
export function tableLines(lines: readonly string[]): Map<number, TableLine> {
  const found = new Map<number, TableLine>();
  let start = 0;
  while (start < lines.length) {
    const keyed = runFrom(lines, start, keyedCells, (first, next) => next.names.join('\u0000') === first.names.join('\u0000'));
    if (keyed.length >= 2) {
      keyed.forEach(({ names, values }, i) => {
        found.set(start + i, { kind: 'row', row: { table: start, header: names, cells: values } });
      });
      start += keyed.length;
      continue;
    }
    const piped = runFrom(lines, start, pipeCells, (first, next) => next.length === first.length);
    const [header, second] = piped;
    const framing = piped.map((cells, i) => i === 0 || isDelimiter(cells));
    const headed = header?.every((name) => name !== '') && ((second && isDelimiter(second)) || looksLikeHeader(header));
    if (header && headed && framing.includes(false)) {
      piped.forEach((cells, i) => {
        found.set(start + i, framing[i] ? { kind: 'frame' } : { kind: 'row', row: { table: start, header, cells } });
      });
      start += piped.length;
      continue;
    }
    start++;
  }
  return found;
}

const cell = (text: string) => text.replaceAll('|', '\\|');

/** A GFM pipe table: the header, the delimiter row, the rows. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.map(cell).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}
