import { sentenceSpans } from '#core/text/sentences.ts';
import type { Chunk, ChunkMetadata } from './chunk.ts';
import type { PlacedBlock } from './placed-blocks.ts';

/** A span of one placed block's text; chunks are built from these. */
interface Piece {
  /** Index of the placed block. */
  block: number;
  start: number;
  end: number;
  /** Whole sentences (not a cut inside one), so it may be repeated as overlap. */
  whole: boolean;
}

/**
 * Packs placed blocks into chunks, one call per heading, text block or table, in document
 * order; `finish` returns the chunks. The rules are `chunkBlocks`'s.
 */
export class ChunkBuilder {
  private readonly chunks: Chunk[] = [];
  private pieces: Piece[] = [];
  private length = 0;
  private contentChars = 0;
  /** The sheet of the chunk's content, which a chunk never mixes. */
  private sheet: string | undefined;
  /** Below this much content a chunk is too small to stand alone before a new section. */
  private readonly tiny: number;

  constructor(
    private readonly blocks: readonly PlacedBlock[],
    private readonly chunkSize: number,
    private readonly overlap: number,
    /** Chunks at most: the one past it is not made, and ChunksFull stops the building. */
    private readonly maxChunks = Number.POSITIVE_INFINITY,
  ) {
    this.tiny = Math.min(200, Math.floor(chunkSize / 5));
  }

  /** The chunks made so far (all of them once `finish` has run). */
  made(): Chunk[] {
    return this.chunks;
  }

  addHeading(index: number): void {
    if (this.contentLength() >= this.tiny) this.breakChunk(null, 0, false);
    this.addPiece(this.wholePiece(index), false);
  }

  addText(index: number): void {
    this.breakOnSheetChange(index);
    const piece = this.wholePiece(index);
    if (this.fits(piece)) {
      this.push(piece);
      return;
    }
    // A paragraph that fits a chunk of its own moves there whole rather than being cut.
    if (this.contentLength() >= this.tiny && this.breakFor([piece], true)) return;
    const text = this.textOf(piece);
    for (const [start, end] of sentenceSpans(text)) this.addPiece({ block: index, start, end, whole: true }, true);
  }

  /** Rows [from, to) of one table: kept together when they fit, never cut mid-row otherwise. */
  addTable(from: number, to: number): void {
    this.breakOnSheetChange(from);
    const rows: Piece[] = [];
    for (let index = from; index < to; index++) rows.push(this.wholePiece(index));
    if (this.fitsAll(rows)) {
      for (const row of rows) this.push(row);
      return;
    }
    if (this.contentLength() >= this.tiny && this.breakFor(rows, true)) return;
    for (const row of rows) this.addPiece(row, true);
  }

  finish(): Chunk[] {
    this.emit(this.pieces);
    this.reset();
    return this.chunks;
  }

  private reset(): void {
    this.pieces = [];
    this.length = 0;
    this.contentChars = 0;
    this.sheet = undefined;
  }

  private breakOnSheetChange(index: number): void {
    const sheet = this.blocks[index]?.sheet;
    if (sheet !== undefined && this.sheet !== undefined && this.sheet !== sheet) this.breakChunk(null, 0, false);
  }

  /** Adds a piece of any length, starting a new chunk or cutting it at words when it does not fit. */
  private addPiece(piece: Piece, allowOverlap: boolean): void {
    if (this.fits(piece)) {
      this.push(piece);
      return;
    }
    const length = piece.end - piece.start;
    if (this.hasContent() && (length <= this.chunkSize || this.contentLength() >= this.tiny)) {
      this.breakChunk(piece, length, allowOverlap);
      if (this.fits(piece)) {
        this.push(piece);
        return;
      }
    }
    this.fillWithWords(piece);
  }

  /** For a piece longer than the room left: fill chunks with as many whole words as fit. */
  private fillWithWords(piece: Piece): void {
    let rest = piece;
    for (;;) {
      if (this.fits(rest)) {
        this.push(rest);
        return;
      }
      const room = this.chunkSize - this.length - (this.pieces.length > 0 ? this.separatorBefore(rest).length : 0);
      const cut = this.cutAtWord(rest, room, this.pieces.length === 0);
      if (cut) {
        this.push(cut[0]);
        rest = cut[1];
      }
      this.breakChunk(rest, rest.end - rest.start, false);
    }
  }

  /**
   * Ends the chunk being built and starts the next one. Trailing headings move to the new
   * chunk so that no chunk ends with a heading; otherwise the new chunk may open with the
   * last whole sentences (or, inside a table, the header row) of the one just ended,
   * limited so that `need` more characters still fit.
   */
  private breakChunk(next: Piece | null, need: number, allowOverlap: boolean): void {
    if (this.pieces.length === 0) return;
    let bodyEnd = this.pieces.length;
    while (bodyEnd > 0 && this.isHeading(this.pieces[bodyEnd - 1])) bodyEnd--;
    if (bodyEnd === 0) {
      // Only headings, and what follows cannot join them: they have to stand alone.
      this.emit(this.pieces);
      this.reset();
      return;
    }
    const body = this.pieces.slice(0, bodyEnd);
    const trailingHeadings = this.pieces.slice(bodyEnd);
    this.emit(body);
    this.reset();
    if (trailingHeadings.length > 0) {
      for (const heading of trailingHeadings) this.push(heading);
      return;
    }
    if (!allowOverlap || next === null) return;
    const room = this.chunkSize - need - 1;
    for (const piece of this.carryOver(body, next, room)) this.push(piece);
  }

  /** Starts a new chunk holding all of `pieces`, if they fit one; false leaves everything as it was. */
  private breakFor(pieces: readonly Piece[], allowOverlap: boolean): boolean {
    const first = pieces[0];
    if (!first) return true;
    const total = this.joinedLength(pieces);
    let bodyEnd = this.pieces.length;
    while (bodyEnd > 0 && this.isHeading(this.pieces[bodyEnd - 1])) bodyEnd--;
    const trailing = this.pieces.slice(bodyEnd);
    const carried = trailing.length > 0 ? this.joinedLength(trailing) + 1 : 0;
    if (carried + total > this.chunkSize) return false;
    this.breakChunk(first, total, allowOverlap);
    for (const piece of pieces) this.push(piece);
    return true;
  }

  /** What the next chunk repeats of the body just emitted, at most `room` characters. */
  private carryOver(body: readonly Piece[], next: Piece, room: number): Piece[] {
    const last = body[body.length - 1];
    if (!last || room <= 0) return [];
    const lastBlock = this.blockOf(last);
    const nextBlock = this.blockOf(next);
    if (lastBlock.kind === 'table_row') {
      // A table continuing into the next chunk gets its header row again, so its columns stay named.
      const headerIndex = nextBlock.tableHeader;
      if (headerIndex === undefined || nextBlock.table !== lastBlock.table || headerIndex === next.block) return [];
      const header = this.wholePiece(headerIndex);
      const headerLength = header.end - header.start;
      return headerLength <= this.chunkSize / 3 && headerLength <= room ? [header] : [];
    }
    return this.trailingSentences(body, Math.min(this.overlap, room));
  }

  private trailingSentences(body: readonly Piece[], budget: number): Piece[] {
    const overlap: Piece[] = [];
    let used = 0;
    for (let i = body.length - 1; i >= 0; i--) {
      const piece = body[i];
      if (!piece?.whole) break;
      const kind = this.blockOf(piece).kind;
      if (kind !== 'paragraph' && kind !== 'list_item') break;
      const spans = sentenceSpans(this.textOf(piece));
      for (let s = spans.length - 1; s >= 0; s--) {
        const [start, end] = spans[s] ?? [0, 0];
        const sentence: Piece = { block: piece.block, start: piece.start + start, end: piece.start + end, whole: true };
        const following = overlap[0];
        const added = end - start + (following ? this.separatorBetween(sentence, following).length : 0);
        if (used + added > budget) return overlap;
        overlap.unshift(sentence);
        used += added;
      }
    }
    return overlap;
  }

  /** Cuts a piece at the last space within `room`; at `room` itself only when `hard` and no word fits. */
  private cutAtWord(piece: Piece, room: number, hard: boolean): [Piece, Piece] | null {
    if (room <= 0) return null;
    const text = this.textOf(piece);
    const space = text.lastIndexOf(' ', room);
    if (space > 0) {
      return [
        { block: piece.block, start: piece.start, end: piece.start + space, whole: false },
        { block: piece.block, start: piece.start + space + 1, end: piece.end, whole: false },
      ];
    }
    if (!hard) return null;
    let at = room;
    // Never leave half of a surrogate pair at either side of the cut.
    const code = text.charCodeAt(at - 1);
    if (code >= 0xd800 && code <= 0xdbff && at > 1) at--;
    return [
      { block: piece.block, start: piece.start, end: piece.start + at, whole: false },
      { block: piece.block, start: piece.start + at, end: piece.end, whole: false },
    ];
  }

  private push(piece: Piece): void {
    const previous = this.pieces[this.pieces.length - 1];
    if (previous) this.length += this.separatorBetween(previous, piece).length;
    this.length += piece.end - piece.start;
    this.pieces.push(piece);
    const block = this.blockOf(piece);
    if (block.kind !== 'heading') {
      this.contentChars += piece.end - piece.start;
      this.sheet ??= block.sheet;
    }
  }

  private fits(piece: Piece): boolean {
    const separator = this.pieces.length > 0 ? this.separatorBefore(piece).length : 0;
    return this.length + separator + piece.end - piece.start <= this.chunkSize;
  }

  private fitsAll(pieces: readonly Piece[]): boolean {
    const first = pieces[0];
    if (!first) return true;
    const separator = this.pieces.length > 0 ? this.separatorBefore(first).length : 0;
    return this.length + separator + this.joinedLength(pieces) <= this.chunkSize;
  }

  private joinedLength(pieces: readonly Piece[]): number {
    let total = 0;
    pieces.forEach((piece, i) => {
      const previous = pieces[i - 1];
      total += piece.end - piece.start + (previous ? this.separatorBetween(previous, piece).length : 0);
    });
    return total;
  }

  private separatorBefore(piece: Piece): string {
    const previous = this.pieces[this.pieces.length - 1];
    return previous ? this.separatorBetween(previous, piece) : '';
  }

  /**
   * Adjacent spans of one block rejoin as they were (a space, or nothing after a hard cut), as do
   * the parts of a block that was cut for length; blocks are separate lines.
   */
  private separatorBetween(previous: Piece, piece: Piece): string {
    if (previous.block === piece.block && previous.end <= piece.start) {
      const gap = this.blockOf(piece).text.slice(previous.end, piece.start);
      if (gap.trim() === '') return gap;
    }
    if (
      piece.block === previous.block + 1 &&
      this.blockOf(piece).continues &&
      piece.start === 0 &&
      previous.end === this.blockOf(previous).text.length
    ) {
      return ' ';
    }
    return '\n';
  }

  private hasContent(): boolean {
    return this.contentChars > 0;
  }

  private contentLength(): number {
    return this.contentChars;
  }

  private isHeading(piece: Piece | undefined): boolean {
    return piece !== undefined && this.blockOf(piece).kind === 'heading';
  }

  private wholePiece(index: number): Piece {
    return { block: index, start: 0, end: this.blocks[index]?.text.length ?? 0, whole: true };
  }

  private blockOf(piece: Piece): PlacedBlock {
    const block = this.blocks[piece.block];
    if (!block) throw new Error(`chunkBlocks: no block ${piece.block}`);
    return block;
  }

  private textOf(piece: Piece): string {
    return this.blockOf(piece).text.slice(piece.start, piece.end);
  }

  private emit(pieces: readonly Piece[]): void {
    const first = pieces[0];
    if (!first) return;
    if (this.chunks.length >= this.maxChunks) throw new ChunksFull();
    // Joined into one flat string: built with `+=`, a chunk stays a tree of slices of its blocks,
    // and ten thousand of those take twice the memory of their text.
    const parts: string[] = [];
    pieces.forEach((piece, i) => {
      const previous = pieces[i - 1];
      if (previous) parts.push(this.separatorBetween(previous, piece));
      parts.push(this.textOf(piece));
    });
    const text = parts.join('');
    const blocks = pieces.map((piece) => this.blockOf(piece));
    const metadata: ChunkMetadata = {};
    let firstPage = Number.POSITIVE_INFINITY;
    let lastPage = Number.NEGATIVE_INFINITY;
    for (const { page } of blocks) {
      if (page === undefined) continue;
      firstPage = Math.min(firstPage, page);
      lastPage = Math.max(lastPage, page);
    }
    if (firstPage === lastPage) metadata.page = firstPage;
    else if (firstPage <= lastPage) metadata.pages = [firstPage, lastPage];
    const sheet = (blocks.find((block) => block.kind !== 'heading' && block.sheet) ?? blocks.find((block) => block.sheet))?.sheet;
    if (sheet !== undefined) metadata.sheet = sheet;
    // Headings that open a chunk belong to its path, so take the path at its first content.
    const headings = (blocks.find((block) => block.kind !== 'heading') ?? this.blockOf(first)).headings;
    if (headings.length > 0) metadata.headings = [...headings];
    this.chunks.push({ index: this.chunks.length, text, metadata });
  }
}

/** Thrown when a document would make more than its budget of chunks; `chunkDocument` catches it. */
export class ChunksFull extends Error {
  constructor() {
    super('the document has more chunks than its budget');
    this.name = 'ChunksFull';
  }
}
