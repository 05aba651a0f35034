/**
 * The extractive engine's own text handling: the devstack stands in for a model, so it reads text its own way rather
 * than with the service's retrieval tokenizer or chunker.
 */
import { stemmer } from 'stemmer';

// Lucene's English stop set, the one BM25 baselines use: short, because IDF already discounts common words.
const STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a an and are as at be but by for if in into is it no not of on or such that the their then there these they ' +
    'this to was will with'
  ).split(' '),
);

const words = new Intl.Segmenter('en', { granularity: 'word' });
const sentenceBreaks = new Intl.Segmenter('en', { granularity: 'sentence' });

/** Lowercased, Porter-stemmed word terms, stop words and possessive "'s" left out. Numbers ("3.5", "1,000") stay whole. */
export function terms(text: string): string[] {
  const folded = text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\u2018\u2019\u02bc]/gu, "'");
  return Array.from(words.segment(folded))
    .filter(({ isWordLike }) => isWordLike)
    .map(({ segment }) => segment.replace(/'s$/u, ''))
    .filter((word) => word !== '' && !STOPWORDS.has(word))
    .map((word) => stemmer(word));
}

// Intl.Segmenter breaks after any period followed by a capital or a digit; these endings are initials ("J."),
// dotted forms ("U.S.", "e.g.") and titles, which continue the sentence.
const ABBREVIATION = /(?:^|[\s(])(?:\p{L}|\p{L}+(?:\.\p{L}+)+|dr|mr|mrs|ms|prof|st|jr|sr|vs|cf|approx|fig|etc)\.$/iu;

/** The sentences of one paragraph, whitespace-normalised. */
export function sentences(paragraph: string): string[] {
  const result: string[] = [];
  let pending = '';
  for (const { segment } of sentenceBreaks.segment(paragraph.replace(/\s+/gu, ' ').trim())) {
    pending = pending ? `${pending} ${segment.trim()}` : segment.trim();
    if (pending !== '' && !ABBREVIATION.test(pending)) {
      result.push(pending);
      pending = '';
    }
  }
  if (pending !== '') result.push(pending);
  return result;
}
