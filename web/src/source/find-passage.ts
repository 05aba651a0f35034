/**
 * Where a cited passage lies among a PDF page's text items (pdf.js's text content: one string per
 * text-layer span). The stored passage and the items agree on little but the words: ingestion joins
 * lines with spaces, drops the hyphen of a word broken across lines and reorders columns, while pdf.js
 * splits a line into several items wherever its font or spacing changes and may write a ligature as one
 * character. So both sides are compared as their letters and digits only, lower-cased, in compatibility
 * form (ﬁ is fi) and without accents, and a match is mapped back to the items' own characters.
 */

/** Characters `start` to `end` (UTF-16 offsets, end exclusive) of item `item`. */
export interface ItemRange {
  item: number;
  start: number;
  end: number;
}

export interface PassageMatch {
  /** In page order, one per item, none empty. */
  ranges: ItemRange[];
  /** Whether the match begins where the passage does; otherwise it is a later part, such as its end on the next page. */
  fromStart: boolean;
}

// Anchored at the passage's beginning, a short run is already specific to the page it is cited on.
const MIN_START = 12;
// A run from anywhere in the passage must be longer not to be a phrase any page might say.
const MIN_PART = 30;
// Text on the page that the passage skips (a running header, a page number, a caption) may sit between two runs.
const MAX_GAP = 300;

const foldCache = new Map<string, string>();

/** One code point's letters and digits, as compared: "ﬁ" is "fi", "É" is "e", "-" is nothing. */
function fold(char: string): string {
  let folded = foldCache.get(char);
  if (folded === undefined) {
    folded = char
      .toLowerCase()
      .normalize('NFKD')
      .replace(/[^\p{L}\p{N}]/gu, '');
    foldCache.set(char, folded);
  }
  return folded;
}

export function foldText(text: string): string {
  let folded = '';
  for (const char of text) folded += fold(char);
  return folded;
}

/** The page's folded text, and for each of its characters the item and the item's characters it comes from. */
interface FoldedPage {
  text: string;
  item: number[];
  start: number[];
  end: number[];
}

function foldPage(items: readonly string[]): FoldedPage {
  const page: FoldedPage = { text: '', item: [], start: [], end: [] };
  items.forEach((text, item) => {
    let offset = 0;
    for (const char of text) {
      const folded = fold(char);
      page.text += folded;
      for (let i = 0; i < folded.length; i++) {
        page.item.push(item);
        page.start.push(offset);
        page.end.push(offset + char.length);
      }
      offset += char.length;
    }
  });
  return page;
}

interface Run {
  /** Where the run starts in the page's folded text, and in the passage's. */
  page: number;
  passage: number;
  length: number;
}

/**
 * The longest beginning of `passage` (from `from`) found in `page` at or after `after` and at most `gap`
 * past it. Found lengths are monotonic (a shorter beginning is found wherever a longer one is), so the
 * length is binary-searched.
 */
function longestBeginning(page: string, passage: string, from: number, after: number, gap: number): Run {
  let best: Run = { page: -1, passage: from, length: 0 };
  let low = 1;
  let high = passage.length - from;
  while (low <= high) {
    const length = (low + high) >> 1;
    const at = page.indexOf(passage.slice(from, from + length), after);
    if (at >= 0 && at - after <= gap) {
      best = { page: at, passage: from, length };
      low = length + 1;
    } else {
      high = length - 1;
    }
  }
  return best;
}

/** The longest run `passage` (from `from`) and `page` (from `after`) share: dynamic programming, one row at a time. */
function longestShared(page: string, passage: string, from: number, after: number): Run {
  let best: Run = { page: -1, passage: -1, length: 0 };
  const width = page.length - after;
  let previous = new Int32Array(width + 1);
  let current = new Int32Array(width + 1);
  for (let p = from; p < passage.length; p++) {
    const code = passage.charCodeAt(p);
    for (let t = 0; t < width; t++) {
      const length = page.charCodeAt(after + t) === code ? previous[t]! + 1 : 0;
      current[t + 1] = length;
      if (length > best.length) best = { page: after + t - length + 1, passage: p - length + 1, length };
    }
    [previous, current] = [current, previous];
  }
  return best;
}

function rangesOf(page: FoldedPage, runs: Run[], items: readonly string[]): ItemRange[] {
  const ranges: ItemRange[] = [];
  const add = (item: number, start: number, end: number) => {
    const last = ranges[ranges.length - 1];
    if (last?.item === item && last.end >= start) last.end = Math.max(last.end, end);
    else if (end > start) ranges.push({ item, start, end });
  };
  for (const run of runs) {
    const first = run.page;
    const last = run.page + run.length - 1;
    const [firstItem, lastItem] = [page.item[first]!, page.item[last]!];
    for (let item = firstItem; item <= lastItem; item++) {
      add(item, item === firstItem ? page.start[first]! : 0, item === lastItem ? page.end[last]! : items[item]!.length);
    }
  }
  return ranges;
}

/**
 * Where `passage` is among a page's `items`: its beginning, as much of it as the page has (at least a dozen
 * letters and digits, or all of a shorter passage), or else its longest part the page has (at least 30),
 * such as its end at the top of the next page. From there each following part of the passage is taken that
 * the page has soon after. Null when the page has none of it.
 */
export function findPassage(items: readonly string[], passage: string): PassageMatch | null {
  const page = foldPage(items);
  const wanted = foldText(passage);
  if (wanted.length === 0 || page.text.length === 0) return null;

  const start = longestBeginning(page.text, wanted, 0, 0, Number.POSITIVE_INFINITY);
  const fromStart = start.length >= Math.min(MIN_START, wanted.length);
  const first = fromStart ? start : longestShared(page.text, wanted, 0, 0);
  if (!fromStart && first.length < Math.min(MIN_PART, wanted.length)) return null;

  const runs = [first];
  for (;;) {
    const last = runs[runs.length - 1]!;
    const from = last.passage + last.length;
    const after = last.page + last.length;
    if (from >= wanted.length || after >= page.text.length) break;
    const near = longestBeginning(page.text, wanted, from, after, MAX_GAP);
    // A last few letters count only right where the run before ends: anywhere near, they could be any word.
    const nearEnough = near.length >= MIN_START || (near.length === wanted.length - from && near.page === after);
    const next = nearEnough ? near : longestShared(page.text, wanted, from, after);
    if (!nearEnough && next.length < MIN_PART) break;
    runs.push(next);
  }
  return { ranges: rangesOf(page, runs, items), fromStart };
}
