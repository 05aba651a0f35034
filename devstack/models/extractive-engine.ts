import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { NO_ANSWER } from '#core/contracts/answer-prompt-format.ts';
import { earlierQuestions, type ParsedAnswerPrompt, parseAnswerPrompt } from './answer-prompt-parser.ts';
import { truncateToTokens } from './chat-format.ts';
import type { TextEngine } from './chat-handler.ts';
import { markdownTable, type TableRow, tableLines } from './passage-tables.ts';
import { sentences, terms } from './text-analysis.ts';

/** The name the model server gives this engine. */
export const EXTRACTIVE_MODEL = 'devstack-extractive';

export interface ExtractiveOptions {
  /** Most sentences in an answer. */
  maxSentences?: number;
  /** Share of the question's term weight (IDF) a sentence must match to count as relevant at all, 0–1. */
  minCoverage?: number;
  /** A sentence scoring below this fraction of the best sentence is left out. */
  relativeFloor?: number;
  /** Extra weight for the first passage, tapering to none for the last: retrieval's order is evidence too. */
  rankBoost?: number;
  /** Words per streamed piece. */
  wordsPerChunk?: number;
  /** Pause between pieces; 0 only yields to the event loop. */
  chunkDelayMs?: number;
}

const DEFAULTS: Required<ExtractiveOptions> = {
  maxSentences: 4,
  minCoverage: 0.2,
  relativeFloor: 0.4,
  rankBoost: 0.1,
  wordsPerChunk: 1,
  chunkDelayMs: 0,
};

const K1 = 1.2;
const B = 0.75;
// Shorter pieces are headings, captions and labels: they match query words without saying anything.
const MIN_SENTENCE_WORDS = 4;
// Two sentences sharing this much of their vocabulary say the same thing (chunk overlap repeats sentences).
const DUPLICATE_JACCARD = 0.8;
// From this many quoted sentences on, an answer is a bullet list; one or two read better as prose.
const LIST_FROM = 3;

// Words that frame a question rather than name its subject. Lucene's stop set keeps them, and left in they would
// count as unmatched terms and sink every sentence's coverage.
const QUESTION_WORDS: ReadonlySet<string> = new Set(
  terms(
    'what which who whom whose when where why how does do did done am were been being can could would should shall ' +
      'may might must ' +
      'has have had i me my we our you your please tell explain describe give list name according document documents ' +
      'passage passages text say says said mention mentioned',
  ),
);

/**
 * Weights of the terms of earlier questions, most recent first, as the API weighs them in its sparse query
 * (src/retrieval/conversation.ts): a follow-up such as "what were its side effects?" leans on the question
 * before it, and a follow-up that names a new subject still leads.
 */
const EARLIER_QUESTION_WEIGHTS = [0.5, 0.25, 0.125];

export interface ExtractedSentence {
  /** The passage it comes from, as cited. */
  passage: number;
  /** Whitespace-normalised, otherwise as written. */
  text: string;
  score: number;
  /** Set when the sentence is a row of a table in its passage. */
  row?: TableRow;
}

/** A sentence of a passage, or a whole table row. */
interface Quotable {
  text: string;
  row?: TableRow;
}

interface Candidate extends Quotable {
  passage: number;
  rank: number;
  position: number;
  terms: string[];
  words: number;
}

/**
 * A passage's sentences, and its table rows whole. The chunker puts each block on its own line, so lines are kept
 * apart — a heading does not run into the paragraph under it — except a line that stops mid-sentence before a
 * lowercase one, as wrapped text does. A table's header and delimiter lines are left out: they only name columns.
 */
function passageSentences(text: string): Quotable[] {
  const lines = text.split('\n').map((line) => line.trim());
  const tables = tableLines(lines);
  const blocks: Quotable[] = [];
  let open = false;
  for (const [i, line] of lines.entries()) {
    const table = tables.get(i);
    if (line === '' || table) {
      if (table?.kind === 'row') blocks.push({ text: line.replace(/\s+/gu, ' '), row: table.row });
      open = false;
      continue;
    }
    const previous = blocks.at(-1);
    if (open && previous && !/[.!?…:;]['"”’)\]]*$/u.test(previous.text) && /^\p{Ll}/u.test(line)) {
      previous.text = `${previous.text} ${line}`;
    } else {
      blocks.push({ text: line });
    }
    open = true;
  }
  return blocks.flatMap((block) => (block.row ? [block] : sentences(block.text).map((sentence) => ({ text: sentence }))));
}

function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  let shared = 0;
  for (const term of a) if (b.has(term)) shared++;
  const union = a.size + b.size - shared;
  return union === 0 ? 1 : shared / union;
}

/** The question's terms at weight 1, then those only earlier questions have, at their lower weights. */
function termWeights(question: string, earlier: readonly string[]): Map<string, number> {
  const weights = new Map<string, number>();
  const add = (text: string, weight: number) => {
    for (const term of terms(text)) if (!QUESTION_WORDS.has(term) && !weights.has(term)) weights.set(term, weight);
  };
  add(question, 1);
  for (const [i, text] of earlier.slice(-EARLIER_QUESTION_WEIGHTS.length).toReversed().entries()) {
    add(text, EARLIER_QUESTION_WEIGHTS[i] as number);
  }
  return weights;
}

/**
 * The sentences that answer the question best, in passage order. Each passage sentence is a BM25 document scored
 * against the question's terms (IDF over all the passages' sentences), must match at least `minCoverage` of the
 * question's IDF mass, and gets a small boost by its passage's rank. The terms of `earlier` questions of the
 * conversation count too, at lower weights, so a follow-up is answered about what the conversation is about.
 * Empty when nothing is relevant.
 */
export function extractAnswer(
  parsed: ParsedAnswerPrompt,
  options: ExtractiveOptions = {},
  earlier: readonly string[] = [],
): ExtractedSentence[] {
  const { maxSentences, minCoverage, relativeFloor, rankBoost } = { ...DEFAULTS, ...options };
  const weights = termWeights(parsed.question, earlier);
  const questionTerms = [...weights.keys()];
  if (questionTerms.length === 0 || parsed.passages.length === 0) return [];

  const candidates: Candidate[] = parsed.passages.flatMap((passage, rank) =>
    passageSentences(passage.text).map((quotable, position) => {
      // A row is matched with its column names, which a PDF table's row does not repeat.
      const matched = quotable.row ? [...quotable.row.header, ...quotable.row.cells].join(' ') : quotable.text;
      return {
        ...quotable,
        passage: passage.number,
        rank,
        position,
        terms: terms(matched),
        words: matched.match(/[\p{L}\p{N}]+/gu)?.length ?? 0,
      };
    }),
  );
  if (candidates.length === 0) return [];

  const documentFrequency = new Map<string, number>(questionTerms.map((t) => [t, 0]));
  for (const candidate of candidates) {
    for (const term of new Set(candidate.terms)) {
      const df = documentFrequency.get(term);
      if (df !== undefined) documentFrequency.set(term, df + 1);
    }
  }
  const n = candidates.length;
  // Lucene's BM25 IDF, never negative. A question term found nowhere keeps the highest weight, so a sentence that
  // matches only the question's incidental words falls short of the coverage floor.
  const idf = new Map(
    questionTerms.map((t) => [
      t,
      (weights.get(t) as number) *
        Math.log(1 + (n - (documentFrequency.get(t) ?? 0) + 0.5) / ((documentFrequency.get(t) ?? 0) + 0.5)),
    ]),
  );
  const totalIdf = [...idf.values()].reduce((sum, w) => sum + w, 0);
  const averageLength = Math.max(1, candidates.reduce((sum, c) => sum + c.terms.length, 0) / n);
  const passageCount = parsed.passages.length;

  const scored: (ExtractedSentence & { candidate: Candidate })[] = [];
  for (const candidate of candidates) {
    if (candidate.words < MIN_SENTENCE_WORDS) continue;
    const counts = new Map<string, number>();
    for (const term of candidate.terms) if (idf.has(term)) counts.set(term, (counts.get(term) ?? 0) + 1);
    if (counts.size === 0) continue;
    const lengthNorm = K1 * (1 - B + (B * candidate.terms.length) / averageLength);
    let bm25 = 0;
    let matchedIdf = 0;
    for (const [term, tf] of counts) {
      const weight = idf.get(term) ?? 0;
      bm25 += (weight * tf * (K1 + 1)) / (tf + lengthNorm);
      matchedIdf += weight;
    }
    if (matchedIdf / totalIdf < minCoverage) continue;
    const boost = 1 + (rankBoost * (passageCount - candidate.rank)) / passageCount;
    scored.push({ passage: candidate.passage, text: candidate.text, score: bm25 * boost, candidate });
  }
  scored.sort((a, b) => b.score - a.score || a.passage - b.passage || a.candidate.position - b.candidate.position);

  const best = scored[0]?.score ?? 0;
  const chosen: typeof scored = [];
  const chosenTerms: Set<string>[] = [];
  for (const sentence of scored) {
    if (chosen.length >= maxSentences || sentence.score < relativeFloor * best) break;
    const vocabulary = new Set(sentence.candidate.terms);
    if (chosenTerms.some((other) => jaccard(vocabulary, other) >= DUPLICATE_JACCARD)) continue;
    chosen.push(sentence);
    chosenTerms.push(vocabulary);
  }
  chosen.sort((a, b) => a.passage - b.passage || a.candidate.position - b.candidate.position);
  return chosen.map(({ passage, text, score, candidate: { row } }) => ({ passage, text, score, ...(row ? { row } : {}) }));
}

/**
 * The whole answer in Markdown, or NO_ANSWER. When the best sentence is a table row, the answer opens with its
 * table: the header and the chosen rows of that table, then the citation alone after it, where the citation
 * checker reads it as the last row's. The other sentences are quoted each followed by its citation: as prose up
 * to LIST_FROM sentences, as a bullet list from there. Nothing is added that the passages do not say.
 */
export function composeAnswer(sentences: readonly ExtractedSentence[]): string {
  if (sentences.length === 0) return NO_ANSWER;
  const best = sentences.reduce((top, s) => (s.score > top.score ? s : top));
  const table = best.row;
  if (!table) return quote(sentences);
  const inTable = (s: ExtractedSentence) => s.passage === best.passage && s.row?.table === table.table;
  const rows = sentences.flatMap((s) => (inTable(s) ? [(s.row as TableRow).cells] : []));
  const rest = sentences.filter((s) => !inTable(s));
  const parts = [markdownTable(table.header, rows), `[${best.passage}]`];
  if (rest.length > 0) parts.push(quote(rest));
  return parts.join('\n\n');
}

function quote(sentences: readonly ExtractedSentence[]): string {
  const cited = sentences.map((s) => `${s.text} [${s.passage}]`);
  return cited.length >= LIST_FROM ? cited.map((item) => `- ${item}`).join('\n') : cited.join(' ');
}

/**
 * A TextEngine that answers from the prompt's passages alone, extractively: it quotes the most relevant sentences
 * with [n] citations, in Markdown (composeAnswer). Deterministic (temperature is ignored), streamed a few words at
 * a time, and stops when the signal aborts or `maxTokens` is reached.
 */
export function createExtractiveEngine(options: ExtractiveOptions = {}): TextEngine {
  const settings = { ...DEFAULTS, ...options };
  if (!Number.isInteger(settings.wordsPerChunk) || settings.wordsPerChunk < 1) {
    throw new RangeError(`createExtractiveEngine: wordsPerChunk must be a positive integer, got ${settings.wordsPerChunk}`);
  }
  return async function* extractive(messages, { maxTokens, signal }) {
    const full = composeAnswer(extractAnswer(parseAnswerPrompt(messages), settings, earlierQuestions(messages)));
    const answer = maxTokens === undefined ? full : truncateToTokens(full, maxTokens).text;
    // Each piece carries the whitespace before it, line breaks included, so the Markdown arrives as composed.
    const words = answer.match(/\s*\S+/gu) ?? [];
    for (let i = 0; i < words.length; i += settings.wordsPerChunk) {
      if (signal.aborted) return;
      yield words.slice(i, i + settings.wordsPerChunk).join('');
      // Hand the event loop a turn between pieces, as a model's server would, so an abort lands mid-answer.
      if (settings.chunkDelayMs > 0) await sleep(settings.chunkDelayMs, undefined, { signal }).catch(() => {});
      else await nextTurn();
    }
  };
}
