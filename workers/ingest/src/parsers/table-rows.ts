import { MAX_BLOCK_CHARS } from '../chunking/placed-blocks.ts';
import type { ParseBudget } from './budget.ts';
import { cutLongText } from './long-text.ts';
import type { Block } from './types.ts';

/**
 * Tables become one block per row whose text carries its header ("Team: Blues; Cups: 1"),
 * so a row retrieved on its own still says what its values mean. Rows are sparse, their
 * non-empty cells only: a spreadsheet row whose one cell sits in the last of 16,384 columns
 * costs one cell, not 16,384. Every header name repeated into a row counts against the
 * document's budget, so a long header over many rows cannot flood the index.
 */

/** A row's non-empty cells as [column, text], in column order. */
export type Cells = readonly (readonly [column: number, text: string])[];

/**
 * A cell's text on one line. A cell of megabytes is cleaned a piece at a time (cut as
 * parsers/long-text.ts cuts), as one regex replacement over 12 million characters held
 * hundreds of megabytes at once.
 */
export function cleanCell(text: string): string {
  if (text.length <= MAX_BLOCK_CHARS) return text.replace(/\s+/g, ' ').trim();
  return cutLongText(text, MAX_BLOCK_CHARS)
    .map((piece) => piece.replace(/\s+/g, ' ').trim())
    .filter((piece) => piece !== '')
    .join(' ');
}

/** A dense row (a grid's, a CSV record's) as cleaned, non-empty cells. */
export function cellsOf(row: readonly string[]): [number, string][] {
  const cells: [number, string][] = [];
  for (let i = 0; i < row.length; i++) {
    const text = cleanCell(row[i] ?? '');
    if (text !== '') cells.push([i, text]);
  }
  return cells;
}

/** Cells compared as a whole: a row equal to the header is a repeated header, not data. */
function keyOf(cells: Cells): string {
  return cells.map(([column, text]) => `${column}\u0001${text}`).join('\u0000');
}

interface Header {
  names: Map<number, string>;
  key: string;
  cells: Cells;
}

function headerOf(cells: Cells): Header {
  return { names: new Map(cells), key: keyOf(cells), cells };
}

/**
 * "Header: value; Header: value" from cleaned cells, skipping values that merely repeat their
 * header. The budget is charged as the text grows: the header names always (they are the
 * repetition), the values too unless the caller counted them when it read the cells.
 */
export function rowText(header: Header | null, cells: Cells, budget: ParseBudget, valuesCounted: boolean): string {
  const parts: string[] = [];
  for (const [column, value] of cells) {
    const name = header?.names.get(column) ?? '';
    // A header cell merged down into the row is not a value.
    if (name === value && header) continue;
    const part = name !== '' ? `${name}: ${value}` : value;
    // A cell spanning several columns repeats; say it once.
    if (parts[parts.length - 1] === part) continue;
    const repeated = valuesCounted ? part.length - value.length : part.length;
    if (repeated > 0) budget.count(repeated);
    parts.push(part);
  }
  return parts.join('; ');
}

type Place = Omit<Block, 'kind' | 'text'>;

/**
 * A grid whose first non-empty row is the header (DOCX, PPTX, Markdown tables); `place` gives
 * each row's page. With `valuesCounted`, the caller took the cells' text from the budget as it
 * read them, and only the header names repeated into rows are counted here.
 */
export function gridBlocks(
  rows: readonly (readonly string[])[],
  budget: ParseBudget,
  place: (row: number) => Place = () => ({}),
  valuesCounted = false,
): Block[] {
  const filled: { index: number; cells: Cells }[] = [];
  rows.forEach((row, index) => {
    const cells = cellsOf(row);
    if (cells.length > 0) filled.push({ index, cells });
  });
  const [first, ...rest] = filled;
  if (first === undefined) return [];
  if (rest.length === 0) {
    return [{ kind: 'table_row', text: rowText(null, first.cells, budget, valuesCounted), ...place(first.index) }];
  }
  const header = headerOf(first.cells);
  const blocks: Block[] = [];
  for (const { index, cells } of rest) {
    if (keyOf(cells) === header.key) continue;
    const text = rowText(header, cells, budget, valuesCounted);
    if (text !== '') blocks.push({ kind: 'table_row', text, ...place(index) });
  }
  return blocks;
}

/**
 * Rows of a sheet or CSV, fed in order with their 0-based row numbers. The first non-empty row
 * is the header. A lone text cell that starts the sheet or follows a blank row, with a wider row
 * after it, is a section title ("Operational metrics") — it becomes a heading and the next row a
 * new header. A row equal to the header (a repeated header) is dropped. Each row's characters
 * are counted as they come in, before any work is done on them.
 */
export class SheetRows {
  readonly blocks: Block[] = [];
  private header: Header | null = null;
  private headerUsed = false;
  private pending: Cells | null = null;
  private lastIndex = -2;

  constructor(
    private readonly budget: ParseBudget,
    private readonly base: Place = {},
    private readonly titleLevel = 2,
  ) {}

  /** Row `index`, given as its cells' raw text by column (empty ones may be left out). */
  row(index: number, raw: Cells): void {
    let chars = 0;
    for (const [, text] of raw) chars += text.length;
    this.budget.count(chars);
    this.budget.work();
    const cells: [number, string][] = [];
    for (const [column, text] of raw) {
      const clean = cleanCell(text);
      if (clean !== '') cells.push([column, clean]);
    }
    if (cells.length === 0) return;
    if (this.pending) {
      const title = this.pending;
      this.pending = null;
      if (cells.length >= 2) {
        this.emit('heading', title[0]![1], this.titleLevel);
        this.flushHeader();
        this.header = null;
      } else {
        this.loneCell(title);
      }
    }
    const afterGap = index > this.lastIndex + 1;
    this.lastIndex = index;
    if (cells.length === 1 && afterGap && !isNumeric(cells[0]![1])) {
      this.pending = cells;
      return;
    }
    this.accept(cells);
  }

  /** The blocks so far; also after the budget stopped the rows, when what was read is kept. */
  finish(): Block[] {
    const pending = this.pending;
    this.pending = null;
    this.budget.until(() => {
      if (pending) this.loneCell(pending);
      this.flushHeader();
    });
    return this.blocks;
  }

  /**
   * A lone cell set apart by a blank row that titles nothing: below a table it is a note or
   * a source line, not a value of the table's first column; at the top it starts the table.
   */
  private loneCell(cells: Cells): void {
    if (this.header) this.emit('paragraph', cells[0]![1]);
    else this.accept(cells);
  }

  private accept(cells: Cells): void {
    if (!this.header) {
      this.header = headerOf(cells);
      this.headerUsed = false;
      return;
    }
    if (keyOf(cells) === this.header.key) return;
    const text = rowText(this.header, cells, this.budget, true);
    if (text !== '') {
      this.emit('table_row', text);
      this.headerUsed = true;
    }
  }

  /** A header with no rows under it is still content. */
  private flushHeader(): void {
    if (this.header && !this.headerUsed) {
      const text = rowText(null, this.header.cells, this.budget, true);
      if (text !== '') this.emit('table_row', text);
      this.headerUsed = true;
    }
  }

  private emit(kind: Block['kind'], text: string, level?: number): void {
    this.blocks.push({ kind, text, ...(level ? { level } : {}), ...this.base });
  }
}

function isNumeric(text: string): boolean {
  return /^[-+]?[\d.,]+%?$/.test(text);
}
