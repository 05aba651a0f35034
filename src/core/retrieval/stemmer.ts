/**
 * The Porter stemmer as published in M.F. Porter, "An algorithm for suffix stripping",
 * Program 14(3), 1980. Written from the paper's rules; like Porter's own reference
 * implementations (and Lucene's PorterStemFilter, which Anserini's BM25 baselines use),
 * words of one or two letters are left alone, so "is" does not become "i".
 *
 * Input is expected lowercase. Any character other than a, e, i, o, u (and y after a
 * consonant) counts as a consonant, so non-ASCII words pass through mostly unchanged.
 */

const STEP2_RULES: ReadonlyArray<readonly [string, string]> = [
  ['ational', 'ate'],
  ['tional', 'tion'],
  ['enci', 'ence'],
  ['anci', 'ance'],
  ['izer', 'ize'],
  ['abli', 'able'],
  ['alli', 'al'],
  ['entli', 'ent'],
  ['eli', 'e'],
  ['ousli', 'ous'],
  ['ization', 'ize'],
  ['ation', 'ate'],
  ['ator', 'ate'],
  ['alism', 'al'],
  ['iveness', 'ive'],
  ['fulness', 'ful'],
  ['ousness', 'ous'],
  ['aliti', 'al'],
  ['iviti', 'ive'],
  ['biliti', 'ble'],
];

const STEP3_RULES: ReadonlyArray<readonly [string, string]> = [
  ['icate', 'ic'],
  ['ative', ''],
  ['alize', 'al'],
  ['iciti', 'ic'],
  ['ical', 'ic'],
  ['ful', ''],
  ['ness', ''],
];

// 'ion' is handled separately: it needs the stem to end in s or t.
const STEP4_SUFFIXES: readonly string[] = [
  'al',
  'ance',
  'ence',
  'er',
  'ic',
  'able',
  'ible',
  'ant',
  'ement',
  'ment',
  'ent',
  'ion',
  'ou',
  'ism',
  'ate',
  'iti',
  'ous',
  'ive',
  'ize',
];

// Within each step the longest matching suffix decides; if its condition fails, the
// step does nothing (the paper's rule, e.g. "cement" keeps "ement" rather than trying "ent").
const longestFirst = <T>(rules: readonly T[], suffixOf: (rule: T) => string): T[] =>
  [...rules].sort((a, b) => suffixOf(b).length - suffixOf(a).length);
const STEP2 = longestFirst(STEP2_RULES, ([suffix]) => suffix);
const STEP3 = longestFirst(STEP3_RULES, ([suffix]) => suffix);
const STEP4 = longestFirst(STEP4_SUFFIXES, (suffix) => suffix);

function isConsonant(word: string, i: number): boolean {
  const ch = word[i];
  if (ch === 'a' || ch === 'e' || ch === 'i' || ch === 'o' || ch === 'u') return false;
  if (ch === 'y') return i === 0 || !isConsonant(word, i - 1);
  return true;
}

/** m in [C](VC){m}[V]: the number of vowel-consonant sequences in the stem. */
function measure(stem: string): number {
  let m = 0;
  let i = 0;
  const n = stem.length;
  while (i < n && isConsonant(stem, i)) i++;
  while (i < n) {
    while (i < n && !isConsonant(stem, i)) i++;
    if (i >= n) break;
    while (i < n && isConsonant(stem, i)) i++;
    m++;
  }
  return m;
}

function containsVowel(stem: string): boolean {
  for (let i = 0; i < stem.length; i++) if (!isConsonant(stem, i)) return true;
  return false;
}

function endsWithDoubleConsonant(stem: string): boolean {
  const n = stem.length;
  return n >= 2 && stem[n - 1] === stem[n - 2] && isConsonant(stem, n - 1);
}

/** *o: the stem ends consonant-vowel-consonant, and the last consonant is not w, x or y. */
function endsCvc(stem: string): boolean {
  const n = stem.length;
  if (n < 3) return false;
  const last = stem[n - 1];
  return (
    isConsonant(stem, n - 1) &&
    !isConsonant(stem, n - 2) &&
    isConsonant(stem, n - 3) &&
    last !== 'w' &&
    last !== 'x' &&
    last !== 'y'
  );
}

function step1a(word: string): string {
  if (word.endsWith('sses')) return word.slice(0, -2);
  if (word.endsWith('ies')) return word.slice(0, -2);
  if (word.endsWith('ss')) return word;
  if (word.endsWith('s')) return word.slice(0, -1);
  return word;
}

function step1b(word: string): string {
  if (word.endsWith('eed')) {
    const stem = word.slice(0, -3);
    return measure(stem) > 0 ? `${stem}ee` : word;
  }
  let stem: string;
  if (word.endsWith('ed')) stem = word.slice(0, -2);
  else if (word.endsWith('ing')) stem = word.slice(0, -3);
  else return word;
  if (!containsVowel(stem)) return word;
  // Tidy the stem so that later steps see "hope" (from hoping), not "hop".
  if (stem.endsWith('at') || stem.endsWith('bl') || stem.endsWith('iz')) return `${stem}e`;
  if (endsWithDoubleConsonant(stem)) {
    const last = stem[stem.length - 1];
    return last === 'l' || last === 's' || last === 'z' ? stem : stem.slice(0, -1);
  }
  if (measure(stem) === 1 && endsCvc(stem)) return `${stem}e`;
  return stem;
}

function step1c(word: string): string {
  if (word.endsWith('y') && containsVowel(word.slice(0, -1))) return `${word.slice(0, -1)}i`;
  return word;
}

function replaceSuffix(word: string, rules: ReadonlyArray<readonly [string, string]>): string {
  for (const [suffix, replacement] of rules) {
    if (!word.endsWith(suffix)) continue;
    const stem = word.slice(0, -suffix.length);
    return measure(stem) > 0 ? stem + replacement : word;
  }
  return word;
}

function step4(word: string): string {
  for (const suffix of STEP4) {
    if (!word.endsWith(suffix)) continue;
    const stem = word.slice(0, -suffix.length);
    if (measure(stem) <= 1) return word;
    if (suffix === 'ion' && !(stem.endsWith('s') || stem.endsWith('t'))) return word;
    return stem;
  }
  return word;
}

function step5(word: string): string {
  let result = word;
  if (result.endsWith('e')) {
    const stem = result.slice(0, -1);
    const m = measure(stem);
    if (m > 1 || (m === 1 && !endsCvc(stem))) result = stem;
  }
  if (result.endsWith('ll') && measure(result) > 1) result = result.slice(0, -1);
  return result;
}

/** Reduces a lowercase English word to its Porter stem ("relational" → "relat"). */
export function porterStem(word: string): string {
  if (word.length <= 2) return word;
  let result = step1a(word);
  result = step1b(result);
  result = step1c(result);
  result = replaceSuffix(result, STEP2);
  result = replaceSuffix(result, STEP3);
  result = step4(result);
  return step5(result);
}
