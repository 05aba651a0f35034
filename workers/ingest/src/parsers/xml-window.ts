// Split from xml-scan.ts where its input ends: holding a part's text (whole, or a window over its pieces) is one job, reading XML from it another.

export const isXmlSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 13;

/**
 * The length of a piece of a long text node, from `pos` where `held` characters are held: up to
 * just after the last blank among the last few hundred, so that a word is not cut; failing one,
 * all of them, less what would cut a reference in two (`decodeEntities` reads at most 13
 * characters, `&#` and ten digits and `;`) or a surrogate pair.
 */
export function pieceEnd(text: string, pos: number, held: number): number {
  for (let i = held - 1; i >= held - 256; i--) if (isXmlSpace(text.charCodeAt(pos + i))) return i + 1;
  let end = held;
  for (let i = end - 1; i >= end - 13; i--) {
    const c = text.charCodeAt(pos + i);
    if (c === 59 /* ; */) break;
    if (c === 38 /* & */) {
      end = i;
      break;
    }
  }
  const last = text.charCodeAt(pos + end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return end;
}

/** An XML part: the whole text, or its pieces in order as they are decoded (see xml.ts). */
export type XmlText = string | Iterable<string>;

// Text taken from the pieces at least at a time: fewer, larger joins.
const MIN_READ = 64 * 1024;

/**
 * Text that runs on past this many characters held, with no tag in sight, goes to the handler in
 * pieces of a few times this size: a run of 16 million characters held whole was joined again at
 * every doubling of the window. A handler may thus be given one text node as several pieces.
 */
export const TEXT_PIECE_CHARS = 64 * 1024;

/** `Window.find` gave up: more than `limit` characters are held and the needle is not among them. */
export const NOT_WITHIN = -2;

/**
 * The part of the text not yet scanned, from `pos`: offsets are counted from `pos`, so they hold
 * when more text is read in (which drops what was scanned). A token longer than what is held makes
 * it read at least as much again, so joining stays linear however long a token runs.
 */
export class Window {
  text = '';
  pos = 0;
  private readonly pieces: Iterator<string> | null;

  constructor(source: XmlText) {
    if (typeof source === 'string') {
      this.text = source;
      this.pieces = null;
    } else {
      this.pieces = source[Symbol.iterator]();
    }
  }

  /** Characters held from `pos` on. */
  get held(): number {
    return this.text.length - this.pos;
  }

  /** Reads more text; false at the end of the part. */
  more(): boolean {
    if (!this.pieces) return false;
    const want = Math.max(MIN_READ, this.held);
    const parts = [this.text.slice(this.pos)];
    let read = 0;
    while (read < want) {
      const next = this.pieces.next();
      if (next.done) break;
      parts.push(next.value);
      read += next.value.length;
    }
    if (read === 0) return false;
    this.text = parts.join('');
    this.pos = 0;
    return true;
  }

  /** Whether `n` characters are held from `pos`, reading more if need be. */
  has(n: number): boolean {
    while (this.held < n) if (!this.more()) return false;
    return true;
  }

  /**
   * Offset of `needle` at or after offset `from`, or -1 when the part ends first; NOT_WITHIN when
   * more than `limit` characters are held and it is not among them.
   */
  find(needle: string, from: number, limit = Number.POSITIVE_INFINITY): number {
    let start = from;
    for (;;) {
      const at = this.text.indexOf(needle, this.pos + start);
      if (at !== -1) return at - this.pos;
      if (this.held > limit) return NOT_WITHIN;
      start = Math.max(from, this.held - needle.length + 1);
      if (!this.more()) return -1;
    }
  }

  /** Offset of the `>` that ends the tag begun before offset `from`, skipping quoted attribute values; -1 at the end. */
  tagEnd(from: number): number {
    let quote = 0;
    for (let i = from; ; i++) {
      if (i >= this.held && !this.has(i + 1)) return -1;
      const c = this.text.charCodeAt(this.pos + i);
      if (quote !== 0) {
        if (c === quote) quote = 0;
      } else if (c === 34 || c === 39) {
        quote = c;
      } else if (c === 62) {
        return i;
      }
    }
  }

  startsWith(prefix: string): boolean {
    return this.has(prefix.length) && this.text.startsWith(prefix, this.pos);
  }
}
