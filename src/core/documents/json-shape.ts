/**
 * Whether text is JSON (or JSON Lines), and how deep it nests, found in one pass without building
 * anything: the API sniffs an upload's head with it, and the ingest worker checks a whole file's
 * depth before JSON.parse, which nests as deep as the file does and whose result is read by
 * recursion.
 */

/** Arrays and objects open at once, at most: real data nests a dozen levels; past this is a trap. */
export const MAX_JSON_DEPTH = 64;

export type JsonScan =
  /** One whole value ends at `end`. */
  | { status: 'ok'; end: number }
  /** The text ended inside the value: a head cut short, or a truncated file. */
  | { status: 'incomplete' }
  | { status: 'too_deep' }
  | { status: 'invalid' };

const SCALAR = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;

function skipBlanks(text: string, from: number): number {
  let i = from;
  for (let c = text.charCodeAt(i); c === 32 || c === 9 || c === 10 || c === 13; c = text.charCodeAt(++i));
  return i;
}

/** The index just past the string that opens at `from`, or -1 when the text ends first. */
function stringEnd(text: string, from: number): number {
  let i = from + 1;
  for (;;) {
    const quote = text.indexOf('"', i);
    if (quote === -1) return -1;
    let slashes = 0;
    for (let j = quote - 1; text.charCodeAt(j) === 92; j--) slashes++;
    if (slashes % 2 === 0) return quote + 1;
    i = quote + 1;
  }
}

/** Scans the one JSON value that starts at `from` (blanks before it allowed). */
export function scanJsonValue(text: string, from = 0, maxDepth = MAX_JSON_DEPTH): JsonScan {
  // 123 `{`, 91 `[`: the containers open, innermost last.
  const open: number[] = [];
  let expect: 'value' | 'valueOrEnd' | 'key' | 'keyOrEnd' | 'colon' | 'commaOrEnd' = 'value';
  let i = from;
  for (;;) {
    i = skipBlanks(text, i);
    if (i >= text.length) return { status: 'incomplete' };
    const c = text.charCodeAt(i);
    let closed = false;
    if (expect === 'value' || expect === 'valueOrEnd') {
      if (c === 93 && expect === 'valueOrEnd') {
        open.pop();
        i++;
        closed = true;
      } else if (c === 123 || c === 91) {
        if (open.length >= maxDepth) return { status: 'too_deep' };
        open.push(c);
        i++;
        expect = c === 123 ? 'keyOrEnd' : 'valueOrEnd';
        continue;
      } else if (c === 34) {
        i = stringEnd(text, i);
        if (i === -1) return { status: 'incomplete' };
        closed = true;
      } else {
        SCALAR.lastIndex = i;
        if (!SCALAR.test(text)) return { status: 'invalid' };
        i = SCALAR.lastIndex;
        closed = true;
      }
    } else if (expect === 'key' || expect === 'keyOrEnd') {
      if (c === 125 && expect === 'keyOrEnd') {
        open.pop();
        i++;
        closed = true;
      } else if (c === 34) {
        i = stringEnd(text, i);
        if (i === -1) return { status: 'incomplete' };
        expect = 'colon';
        continue;
      } else {
        return { status: 'invalid' };
      }
    } else if (expect === 'colon') {
      if (c !== 58) return { status: 'invalid' };
      i++;
      expect = 'value';
      continue;
    } else {
      const top = open[open.length - 1];
      if (c === 44) {
        i++;
        expect = top === 123 ? 'key' : 'value';
        continue;
      }
      if ((c === 125 && top === 123) || (c === 93 && top === 91)) {
        open.pop();
        i++;
        closed = true;
      } else {
        return { status: 'invalid' };
      }
    }
    if (closed) {
      if (open.length === 0) return { status: 'ok', end: i };
      expect = 'commaOrEnd';
    }
  }
}

/** Whether the text (a head of the file unless `complete`) is one JSON array or object, however deep. */
export function looksLikeJson(text: string, complete: boolean): boolean {
  const start = skipBlanks(text, 0);
  const first = text.charCodeAt(start);
  if (first !== 123 && first !== 91) return false;
  const scan = scanJsonValue(text, start, Number.POSITIVE_INFINITY);
  if (scan.status === 'incomplete') return !complete;
  return scan.status === 'ok' && skipBlanks(text, scan.end) === text.length;
}

/**
 * Whether the text is JSON Lines: an array or object on each line, blank lines allowed. In a head,
 * the last line may be cut short, and only has to begin as JSON does.
 */
export function looksLikeJsonLines(text: string, complete: boolean): boolean {
  const lines = text.split('\n');
  const cut = complete ? undefined : lines.pop();
  let records = 0;
  for (const line of lines) {
    const scan = lineScan(line);
    if (scan === null) continue;
    if (scan.status !== 'ok' || skipBlanks(line, scan.end) !== line.length) return false;
    records++;
  }
  const tail = cut === undefined ? null : lineScan(cut);
  if (
    tail &&
    tail.status !== 'incomplete' &&
    !(tail.status === 'ok' && skipBlanks(cut as string, tail.end) === (cut as string).length)
  )
    return false;
  return records > 0 || tail !== null;
}

/** A line's record scanned, null for a blank line; a line not opening an array or object is invalid. */
function lineScan(line: string): JsonScan | null {
  const start = skipBlanks(line, 0);
  if (start === line.length) return null;
  const first = line.charCodeAt(start);
  if (first !== 123 && first !== 91) return { status: 'invalid' };
  return scanJsonValue(line, start, Number.POSITIVE_INFINITY);
}
