/**
 * Sentence splitting for chunking (cuts and overlap fall between sentences), the extractive
 * stand-in model and the answer scorers (statements and source windows are sentences).
 */

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

// A run of end marks (and closing quotes or brackets) followed by a space and more text. The run is
// taken whole by a lookahead and a backreference, which cannot give characters back, and a match
// may only start where a run starts: the plain `[.!?…]+…(?=\s+\S)` retried every shorter run from
// every position inside a long one, quadratic on a line of dots (50 KB took 9.6 s).
export const SENTENCE_END = /(?<![.!?…])(?=([.!?…]+['"”’»)\]]*))\1(?=\s+\S)|[。！？]+[」』）"”’]*/gu;
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

/**
 * The sentences of a text, whitespace-normalised. A line break ends a sentence too: lines
 * without a final period are list items, headings and table rows.
 */
export function splitSentences(text: string): string[] {
  return text.split('\n').flatMap((line) => {
    const normalised = normaliseWhitespace(line);
    return sentenceSpans(normalised).map(([start, end]) => normalised.slice(start, end));
  });
}

// A run of blanks or control characters other than one plain space. A lone space is left alone,
// so that text already tidy matches nothing and comes back as it was, not copied: every block of
// a 16-million-character document passes through here.
const UNTIDY_BLANKS = /(?! )[\s\p{Cc}][\s\p{Cc}]*| [\s\p{Cc}]+/gu;

/** One space for every run of whitespace and control characters, none at the ends. */
export function normaliseWhitespace(text: string): string {
  // Soft hyphens and zero-width spaces come from PDF and DOCX text layers and are invisible.
  return text
    .replace(/[\u00ad\u200b\u2060\ufeff]/gu, '')
    .replace(UNTIDY_BLANKS, ' ')
    .trim();
}
