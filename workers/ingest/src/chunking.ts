import type { Block } from './parsers/types.ts';

export interface ChunkMetadata {
  /** The page (slide, sheet index) all of the chunk's text comes from. */
  page?: number;
  /** First and last page, when the chunk's text spans pages. */
  pages?: [number, number];
  /** XLSX sheet name. */
  sheet?: string;
  /** Heading path (h1 > h2 > …) in effect where the chunk starts. */
  headings?: string[];
}

export interface Chunk {
  /** 0-based, dense, in document order. */
  index: number;
  /** What is embedded and shown as the source text. */
  text: string;
  metadata: ChunkMetadata;
}

export interface ChunkOptions {
  /** Maximum characters per chunk, the collection's chunk_size. */
  chunkSize: number;
  /** Characters of trailing whole sentences repeated at the start of the next chunk. */
  overlap?: number;
}

export const MIN_CHUNK_SIZE = 100;
export const MAX_CHUNK_SIZE = 8000;

/** 15% of the chunk: room for one or two sentences of context across a cut. */
export function defaultOverlap(chunkSize: number): number {
  return Math.round(chunkSize * 0.15);
}

// ---------------------------------------------------------------------------------------
// Sentences

// Abbreviations whose period does not end a sentence.
const ABBREVIATIONS = new Set([
  'al',
  'approx',
  'apr',
  'aug',
  'ca',
  'capt',
  'cf',
  'col',
  'corp',
  'dec',
  'dept',
  'dr',
  'ed',
  'eds',
  'eq',
  'eqs',
  'est',
  'et',
  'feb',
  'fig',
  'figs',
  'gen',
  'gov',
  'inc',
  'incl',
  'jan',
  'jr',
  'jul',
  'jun',
  'lt',
  'ltd',
  'mr',
  'mrs',
  'ms',
  'mt',
  'nov',
  'oct',
  'prof',
  'ref',
  'refs',
  'resp',
  'rev',
  'sept',
  'sgt',
  'sr',
  'st',
  'suppl',
  'tab',
  'viz',
  'vol',
  'vols',
  'vs',
]);
// Abbreviations only when a number follows ("No. 5", "pp. 12"); otherwise ordinary words.
const NUMBER_ABBREVIATIONS = new Set(['art', 'ch', 'no', 'nos', 'pp', 'sec']);

const SENTENCE_END = /[.!?…]+['"”’»)\]]*(?=\s+\S)|[。！？]+[」』）"”’]*/gu;
const LEADING_PUNCTUATION = /^[("'“‘«[]+/u;
const SINGLE_LETTER = /^\p{L}$/u;
const DOTTED_ABBREVIATION = /^\p{L}+(?:\.\p{L}+)+$/u;
const LOWERCASE = /^\p{Ll}/u;
const DIGIT = /^\p{N}/u;

function isSentenceEnd(text: string, markStart: number, mark: string, nextStart: number): boolean {
  if (/^[。！？]/u.test(mark)) return true;
  const next = text.slice(nextStart, nextStart + 1);
  // "approx. five", "e.g. the" — a lowercase continuation is never a new sentence.
  if (LOWERCASE.test(next)) return false;
  if (!/^\.['"”’»)\]]*$/u.test(mark)) return true;
  const word = text.slice(text.lastIndexOf(' ', markStart - 1) + 1, markStart).replace(LEADING_PUNCTUATION, '');
  const lower = word.toLowerCase();
  if (ABBREVIATIONS.has(lower)) return false;
  // Initials ("J. Smith") and dotted forms ("e.g.", "U.S.", "Ph.D.").
  if (SINGLE_LETTER.test(word) || DOTTED_ABBREVIATION.test(word)) return false;
  if (NUMBER_ABBREVIATIONS.has(lower) && DIGIT.test(next)) return false;
  return true;
}

/**
 * Splits whitespace-normalised text into sentences, as [start, end) offsets with no
 * surrounding spaces. Periods in abbreviations, initials and decimals do not split.
 */
export function sentenceSpans(text: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  let start = 0;
  for (const match of text.matchAll(SENTENCE_END)) {
    const end = match.index + match[0].length;
    let nextStart = end;
    while (nextStart < text.length && text[nextStart] === ' ') nextStart++;
    if (!isSentenceEnd(text, match.index, match[0], nextStart)) continue;
    if (end > start) spans.push([start, end]);
    start = nextStart;
  }
  if (start < text.length) spans.push([start, text.length]);
  return spans;
}

/** The sentences of a text, whitespace-normalised. */
export function splitSentences(text: string): string[] {
  const normalised = normaliseWhitespace(text);
  return sentenceSpans(normalised).map(([start, end]) => normalised.slice(start, end));
}

function normaliseWhitespace(text: string): string {
  // Soft hyphens and zero-width spaces come from PDF and DOCX text layers and are invisible.
  return text
    .replace(/[\u00ad\u200b\u2060\ufeff]/gu, '')
    .replace(/[\s\p{Cc}]+/gu, ' ')
    .trim();
}

// ---------------------------------------------------------------------------------------
// Chunks

/** A non-empty block, normalised, with the heading path in effect at it. */
interface Source {
  kind: Block['kind'];
  text: string;
  page?: number;
  sheet?: string;
  headings: readonly string[];
  /** Consecutive table rows of one sheet share a table. */
  table?: number;
  /** The table's first row, repeated as a header when a table continues into a new chunk. */
  tableHeader?: number;
}

/** A span of one source's text; chunks are built from these. */
interface Piece {
  source: number;
  start: number;
  end: number;
  /** Whole sentences (not a cut inside one), so it may be repeated as overlap. */
  whole: boolean;
}

function toSources(blocks: readonly Block[]): Source[] {
  if (!Array.isArray(blocks)) throw new TypeError('chunkBlocks: blocks must be an array');
  const sources: Source[] = [];
  const headingStack: Array<{ level: number; text: string }> = [];
  let table = -1;
  let tableHeader = -1;
  let previous: Source | undefined;
  for (const block of blocks) {
    const text = typeof block?.text === 'string' ? normaliseWhitespace(block.text) : '';
    if (!text) continue;
    const source: Source = { kind: block.kind, text, headings: [] };
    if (typeof block.page === 'number' && Number.isFinite(block.page)) source.page = block.page;
    if (typeof block.sheet === 'string' && block.sheet) source.sheet = block.sheet;
    if (block.kind === 'heading') {
      const level = Math.min(6, Math.max(1, Math.trunc(block.level ?? 1) || 1));
      while (headingStack.length > 0 && (headingStack[headingStack.length - 1]?.level ?? 0) >= level) headingStack.pop();
      headingStack.push({ level, text });
    }
    source.headings = headingStack.map((heading) => heading.text);
    if (block.kind === 'table_row') {
      if (previous?.kind !== 'table_row' || previous.sheet !== source.sheet) {
        table++;
        tableHeader = sources.length;
      }
      source.table = table;
      source.tableHeader = tableHeader;
    }
    sources.push(source);
    previous = source;
  }
  return sources;
}

class ChunkBuilder {
  private readonly chunks: Chunk[] = [];
  private pieces: Piece[] = [];
  private length = 0;
  private contentChars = 0;
  /** The sheet of the chunk's content, which a chunk never mixes. */
  private sheet: string | undefined;
  /** Below this much content a chunk is too small to stand alone before a new section. */
  private readonly tiny: number;

  constructor(
    private readonly sources: readonly Source[],
    private readonly chunkSize: number,
    private readonly overlap: number,
  ) {
    this.tiny = Math.min(200, Math.floor(chunkSize / 5));
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
    for (const [start, end] of sentenceSpans(text)) this.addPiece({ source: index, start, end, whole: true }, true);
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
    const sheet = this.sources[index]?.sheet;
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
    const lastSource = this.sourceOf(last);
    const nextSource = this.sourceOf(next);
    if (lastSource.kind === 'table_row') {
      // A table continuing into the next chunk gets its header row again, so its columns stay named.
      const headerIndex = nextSource.tableHeader;
      if (headerIndex === undefined || nextSource.table !== lastSource.table || headerIndex === next.source) return [];
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
      const kind = this.sourceOf(piece).kind;
      if (kind !== 'paragraph' && kind !== 'list_item') break;
      const spans = sentenceSpans(this.textOf(piece));
      for (let s = spans.length - 1; s >= 0; s--) {
        const [start, end] = spans[s] ?? [0, 0];
        const sentence: Piece = { source: piece.source, start: piece.start + start, end: piece.start + end, whole: true };
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
        { source: piece.source, start: piece.start, end: piece.start + space, whole: false },
        { source: piece.source, start: piece.start + space + 1, end: piece.end, whole: false },
      ];
    }
    if (!hard) return null;
    let at = room;
    // Never leave half of a surrogate pair at either side of the cut.
    const code = text.charCodeAt(at - 1);
    if (code >= 0xd800 && code <= 0xdbff && at > 1) at--;
    return [
      { source: piece.source, start: piece.start, end: piece.start + at, whole: false },
      { source: piece.source, start: piece.start + at, end: piece.end, whole: false },
    ];
  }

  private push(piece: Piece): void {
    const previous = this.pieces[this.pieces.length - 1];
    if (previous) this.length += this.separatorBetween(previous, piece).length;
    this.length += piece.end - piece.start;
    this.pieces.push(piece);
    const source = this.sourceOf(piece);
    if (source.kind !== 'heading') {
      this.contentChars += piece.end - piece.start;
      this.sheet ??= source.sheet;
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

  /** Adjacent spans of one block rejoin as they were (a space, or nothing after a hard cut); blocks are separate lines. */
  private separatorBetween(previous: Piece, piece: Piece): string {
    if (previous.source === piece.source && previous.end <= piece.start) {
      const gap = this.sourceOf(piece).text.slice(previous.end, piece.start);
      if (gap.trim() === '') return gap;
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
    return piece !== undefined && this.sourceOf(piece).kind === 'heading';
  }

  private wholePiece(index: number): Piece {
    return { source: index, start: 0, end: this.sources[index]?.text.length ?? 0, whole: true };
  }

  private sourceOf(piece: Piece): Source {
    const source = this.sources[piece.source];
    if (!source) throw new Error(`chunkBlocks: no source ${piece.source}`);
    return source;
  }

  private textOf(piece: Piece): string {
    return this.sourceOf(piece).text.slice(piece.start, piece.end);
  }

  private emit(pieces: readonly Piece[]): void {
    const first = pieces[0];
    if (!first) return;
    let text = '';
    pieces.forEach((piece, i) => {
      const previous = pieces[i - 1];
      if (previous) text += this.separatorBetween(previous, piece);
      text += this.textOf(piece);
    });
    const sources = pieces.map((piece) => this.sourceOf(piece));
    const metadata: ChunkMetadata = {};
    let firstPage = Number.POSITIVE_INFINITY;
    let lastPage = Number.NEGATIVE_INFINITY;
    for (const { page } of sources) {
      if (page === undefined) continue;
      firstPage = Math.min(firstPage, page);
      lastPage = Math.max(lastPage, page);
    }
    if (firstPage === lastPage) metadata.page = firstPage;
    else if (firstPage <= lastPage) metadata.pages = [firstPage, lastPage];
    const sheet = (sources.find((source) => source.kind !== 'heading' && source.sheet) ?? sources.find((source) => source.sheet))
      ?.sheet;
    if (sheet !== undefined) metadata.sheet = sheet;
    // Headings that open a chunk belong to its path, so take the path at its first content.
    const headings = (sources.find((source) => source.kind !== 'heading') ?? this.sourceOf(first)).headings;
    if (headings.length > 0) metadata.headings = [...headings];
    this.chunks.push({ index: this.chunks.length, text, metadata });
  }
}

function resolveOptions(options: ChunkOptions): { chunkSize: number; overlap: number } {
  const { chunkSize } = options;
  if (!Number.isInteger(chunkSize) || chunkSize < MIN_CHUNK_SIZE || chunkSize > MAX_CHUNK_SIZE) {
    throw new RangeError(`chunkSize must be an integer from ${MIN_CHUNK_SIZE} to ${MAX_CHUNK_SIZE}, got ${chunkSize}`);
  }
  const overlap = options.overlap ?? defaultOverlap(chunkSize);
  const maxOverlap = Math.floor(chunkSize / 2);
  if (!Number.isInteger(overlap) || overlap < 0 || overlap > maxOverlap) {
    throw new RangeError(`overlap must be an integer from 0 to ${maxOverlap} (half of chunkSize), got ${overlap}`);
  }
  return { chunkSize, overlap };
}

/**
 * Turns a parsed document's blocks into chunks of at most `chunkSize` characters.
 *
 * Structure comes first: a heading starts a new chunk (unless the one being built is
 * tiny) and is never left at a chunk's end; paragraphs, list items and table rows are
 * packed whole while they fit; a block too long for one chunk is cut at sentences, then
 * at words, and a single word only when it alone is longer than a chunk. A table keeps
 * its rows whole and repeats its header row when it continues. A chunk cut inside
 * running text repeats the previous chunk's last whole sentences (up to `overlap`
 * characters), within the size limit. Output is deterministic for the same input.
 */
export function chunkBlocks(blocks: readonly Block[], options: ChunkOptions): Chunk[] {
  const { chunkSize, overlap } = resolveOptions(options);
  const sources = toSources(blocks);
  const builder = new ChunkBuilder(sources, chunkSize, overlap);
  let index = 0;
  while (index < sources.length) {
    const source = sources[index];
    if (!source) break;
    if (source.kind === 'heading') {
      builder.addHeading(index);
      index++;
    } else if (source.kind === 'table_row') {
      let end = index + 1;
      while (sources[end]?.kind === 'table_row' && sources[end]?.table === source.table) end++;
      builder.addTable(index, end);
      index = end;
    } else {
      builder.addText(index);
      index++;
    }
  }
  return builder.finish();
}
