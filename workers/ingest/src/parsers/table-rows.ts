import type { Block } from './types.ts';

/**
 * Tables become one block per row whose text carries its header ("Team: Blues; Cups: 1"),
 * so a row retrieved on its own still says what its values mean.
 */

export function cleanCell(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** "Header: value; Header: value", skipping empty cells and values that merely repeat their header. */
export function rowText(header: readonly string[] | null, cells: readonly string[]): string {
  const parts: string[] = [];
  for (let i = 0; i < cells.length; i++) {
    const value = cleanCell(cells[i] ?? '');
    if (value === '') continue;
    const name = cleanCell(header?.[i] ?? '');
    // A header cell merged down into the row is not a value.
    if (name === value && header) continue;
    const part = name !== '' ? `${name}: ${value}` : value;
    // A cell spanning several columns repeats; say it once.
    if (parts[parts.length - 1] !== part) parts.push(part);
  }
  return parts.join('; ');
}

type Place = Omit<Block, 'kind' | 'text'>;

/** A grid whose first non-empty row is the header (DOCX, PPTX, Markdown tables); `place` gives each row's page. */
export function gridBlocks(rows: readonly (readonly string[])[], place: (row: number) => Place = () => ({})): Block[] {
  const indexes = rows.map((_, i) => i).filter((i) => rows[i]!.some((c) => cleanCell(c) !== ''));
  const [first, ...rest] = indexes;
  if (first === undefined) return [];
  const header = rows[first]!;
  if (rest.length === 0) return [{ kind: 'table_row', text: rowText(null, header), ...place(first) }];
  const headerKey = header.map(cleanCell).join('\u0000');
  const blocks: Block[] = [];
  for (const i of rest) {
    const row = rows[i]!;
    if (row.map(cleanCell).join('\u0000') === headerKey) continue;
    const text = rowText(header, row);
    if (text !== '') blocks.push({ kind: 'table_row', text, ...place(i) });
  }
  return blocks;
}

/**
 * Rows of a sheet or CSV, fed in order with their 0-based row numbers. The first non-empty row
 * is the header. A lone text cell that starts the sheet or follows a blank row, with a wider row
 * after it, is a section title ("Operational metrics") — it becomes a heading and the next row a
 * new header. A row equal to the header (a repeated header) is dropped.
 */
export class SheetRows {
  readonly blocks: Block[] = [];
  private header: string[] | null = null;
  private headerKey = '';
  private headerUsed = false;
  private pending: string[] | null = null;
  private lastIndex = -2;

  constructor(
    private readonly base: Place = {},
    private readonly titleLevel = 2,
  ) {}

  row(index: number, cells: readonly string[]): void {
    const cleaned = cells.map(cleanCell);
    const filled = cleaned.filter((c) => c !== '').length;
    if (filled === 0) return;
    if (this.pending) {
      const title = this.pending;
      this.pending = null;
      if (filled >= 2) {
        this.emit('heading', title.find((c) => c !== '')!, this.titleLevel);
        this.flushHeader();
        this.header = null;
      } else {
        this.loneCell(title);
      }
    }
    const afterGap = index > this.lastIndex + 1;
    this.lastIndex = index;
    if (filled === 1 && afterGap && !isNumeric(cleaned.find((c) => c !== '')!)) {
      this.pending = cleaned;
      return;
    }
    this.accept(cleaned);
  }

  finish(): Block[] {
    if (this.pending) this.loneCell(this.pending);
    this.pending = null;
    this.flushHeader();
    return this.blocks;
  }

  /**
   * A lone cell set apart by a blank row that titles nothing: below a table it is a note or
   * a source line, not a value of the table's first column; at the top it starts the table.
   */
  private loneCell(cells: string[]): void {
    if (this.header) this.emit('paragraph', cells.find((c) => c !== '')!);
    else this.accept(cells);
  }

  private accept(cells: string[]): void {
    if (!this.header) {
      this.header = cells;
      this.headerKey = cells.join('\u0000');
      this.headerUsed = false;
      return;
    }
    if (cells.join('\u0000') === this.headerKey) return;
    const text = rowText(this.header, cells);
    if (text !== '') {
      this.emit('table_row', text);
      this.headerUsed = true;
    }
  }

  /** A header with no rows under it is still content. */
  private flushHeader(): void {
    if (this.header && !this.headerUsed) {
      const text = rowText(null, this.header);
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
