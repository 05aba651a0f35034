/**
 * Markdown's inline markup, stripped in one pass per kind and in linear time. Links keep their
 * text, images their alt text; bold and code lose their markers; escapes their backslash.
 *
 * The regexes this replaces (`\[([^\]]+)\]\([^)]*\)`, `(\*\*|__)(?=\S)(.+?)(?<=\S)\1`, ...) gave
 * the same results but searched to the end of the text again from every opening bracket or
 * marker that had no partner: quadratic in a paragraph of `[[[[` or `**a **a`. Here each search
 * for a partner resumes where the last one stopped, so every character is looked at a bounded
 * number of times.
 */

/** The first match at or after a position, for positions that only grow: the text is searched once. */
class Forward {
  private from = -1;
  private found = -1;

  constructor(
    private readonly text: string,
    private readonly find: (text: string, from: number) => number,
  ) {}

  at(position: number): number {
    if (position < this.from) return this.find(this.text, position);
    if (this.from !== -1 && (this.found === -1 || position <= this.found)) return this.found;
    this.from = position;
    this.found = this.find(this.text, position);
    return this.found;
  }
}

const indexOf = (needle: string) => (text: string, from: number) => text.indexOf(needle, from);
const isSpace = (char: string | undefined) => char !== undefined && /\s/.test(char);
const LINE_TERMINATOR = /[\n\r\u2028\u2029]/g;

function lineTerminator(text: string, from: number): number {
  LINE_TERMINATOR.lastIndex = from;
  return LINE_TERMINATOR.exec(text)?.index ?? -1;
}

/**
 * `[label](target)` → label (and `![alt](src)` → alt, with `image`): an opening bracket, the
 * first `]` after it, `(` right after that, and the first `)` after that.
 */
function stripLinks(text: string, image: boolean): string {
  const opener = image ? '![' : '[';
  const closeBracket = new Forward(text, indexOf(']'));
  const closeParen = new Forward(text, indexOf(')'));
  let out = '';
  let last = 0;
  let i = text.indexOf(opener);
  while (i !== -1) {
    const labelStart = i + opener.length;
    const close = closeBracket.at(labelStart);
    if (close === -1) break;
    // A link needs a label; an image's alt text may be empty.
    if ((!image && close === labelStart) || text[close + 1] !== '(') {
      i = text.indexOf(opener, i + 1);
      continue;
    }
    const end = closeParen.at(close + 2);
    if (end === -1) break;
    out += text.slice(last, i) + text.slice(labelStart, close);
    last = end + 1;
    i = text.indexOf(opener, last);
  }
  return last === 0 ? text : out + text.slice(last);
}

/** `[label][ref]` → label. */
function stripReferenceLinks(text: string): string {
  const closeBracket = new Forward(text, indexOf(']'));
  let out = '';
  let last = 0;
  let i = text.indexOf('[');
  while (i !== -1) {
    const close = closeBracket.at(i + 1);
    if (close === -1) break;
    if (close === i + 1 || text[close + 1] !== '[') {
      i = text.indexOf('[', i + 1);
      continue;
    }
    const end = closeBracket.at(close + 2);
    if (end === -1) break;
    out += text.slice(last, i) + text.slice(i + 1, close);
    last = end + 1;
    i = text.indexOf('[', last);
  }
  return last === 0 ? text : out + text.slice(last);
}

/**
 * `**bold**` and `__bold__` → bold: a marker followed by a non-space, and the first same
 * marker after it that follows a non-space, on the same line.
 */
function stripBold(text: string): string {
  const closer = (marker: string) =>
    new Forward(text, (t, from) => {
      let at = t.indexOf(marker, from);
      while (at !== -1 && isSpace(t[at - 1])) at = t.indexOf(marker, at + 1);
      return at;
    });
  const closers = { '**': closer('**'), __: closer('__') };
  const openers = { '**': new Forward(text, indexOf('**')), __: new Forward(text, indexOf('__')) };
  const lineEnd = new Forward(text, lineTerminator);
  let out = '';
  let last = 0;
  let from = 0;
  for (;;) {
    const stars = openers['**'].at(from);
    const unders = openers.__.at(from);
    if (stars === -1 && unders === -1) break;
    const i = stars === -1 ? unders : unders === -1 ? stars : Math.min(stars, unders);
    const marker = i === stars ? '**' : '__';
    from = i + 1;
    if (i + 2 >= text.length || isSpace(text[i + 2])) continue;
    const close = closers[marker].at(i + 3);
    if (close === -1) continue;
    const newline = lineEnd.at(i + 2);
    if (newline !== -1 && newline < close) continue;
    out += text.slice(last, i) + text.slice(i + 2, close);
    last = close + 2;
    from = last;
  }
  return last === 0 ? text : out + text.slice(last);
}

/** `` `code` `` → code: a run of backticks, the text up to the next backtick, and the run there. */
function stripCode(text: string): string {
  let out = '';
  let last = 0;
  let i = text.indexOf('`');
  while (i !== -1) {
    let open = i;
    while (text[open] === '`') open++;
    const close = text.indexOf('`', open);
    // No backtick after this run: no later run has a partner either.
    if (open >= text.length || close === -1) break;
    let end = close;
    while (text[end] === '`') end++;
    out += text.slice(last, i) + text.slice(open, close);
    last = end;
    i = text.indexOf('`', end);
  }
  return last === 0 ? text : out + text.slice(last);
}

/** Inline markup that adds nothing to the words: links keep their text, images their alt text. */
export function stripInline(text: string): string {
  return stripCode(stripBold(stripReferenceLinks(stripLinks(stripLinks(text, true), false))))
    .replace(/\\([\\`*_{}[\]()#+\-.!|>~])/g, '$1')
    .trim();
}
