/**
 * Walls of text: a paragraph of megabytes with no blank line in it. Cut early into pieces of a
 * bounded size, so that each step after (tidying, normalising, splitting into sentences) works on
 * a piece rather than on one huge string, copying it whole at every step.
 */

const isBlank = (c: number) => c === 32 || (c >= 9 && c <= 13);

/**
 * Pieces of at most `size` characters, in order, cut at the last blank before the limit (the
 * blank itself dropped), or at the limit when a piece has no blank; never inside a surrogate
 * pair. Text of `size` characters or fewer is one piece.
 */
export function cutLongText(text: string, size: number): string[] {
  const pieces: string[] = [];
  let start = 0;
  while (text.length - start > size) {
    let blank = start + size;
    while (blank > start && !isBlank(text.charCodeAt(blank))) blank--;
    let end = blank > start ? blank : start + size;
    if (blank <= start) {
      const code = text.charCodeAt(end - 1);
      if (code >= 0xd800 && code <= 0xdbff) end--;
    }
    pieces.push(text.slice(start, end));
    start = blank > start ? blank + 1 : end;
  }
  pieces.push(text.slice(start));
  return pieces;
}
