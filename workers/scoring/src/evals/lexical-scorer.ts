import type { Scores } from '#core/db/scoring.ts';
import { splitSentences } from '#core/text/sentences.ts';
import { denseCosine } from '#retrieval/similarity.ts';
import { tokenize } from '#retrieval/sparse.ts';
import { checkScoreInput, clampScore, type ScoreInput } from './score-input.ts';
import { answerStatements, contentTerms, type Statement } from './statements.ts';

export { judgeScores } from './judge.ts';
export type { ScoreInput } from './score-input.ts';

export interface LexicalScoreOptions {
  /** Embeds texts with the collection's embedding model; lets paraphrases count as support. */
  embed?: (texts: string[]) => Promise<number[][]>;
}

/**
 * Share of a statement's content terms that must occur in one window of a source for it to
 * count as supported. A precision-first choice, measured on the shared test data with the number
 * rule below: SciFact's 564 claim–cited-abstract pairs pass at 0.6 in 45% of cases, the same
 * claims against the most-overlapping uncited abstract of the corpus in 13% (at 0.5: 66% and
 * 29%). PubMedQA's conclusions, which infer rather than restate, pass against their own abstract
 * in 20%, against the most-overlapping other abstract in 0.7%. Answers written from the passages
 * reuse their wording more than either; embeddings, when configured, admit paraphrases.
 */
export const LEXICAL_SUPPORT_THRESHOLD = 0.6;
/** With embeddings, a statement with at least this term recall is supported if it is also close in meaning. */
export const LEXICAL_PARTIAL_SUPPORT = 0.3;
/** Cosine between a statement and a source passage that counts as "says the same thing" (MiniLM / text-embedding-3 scale). */
export const EMBEDDING_SUPPORT_THRESHOLD = 0.6;
/** Question–passage cosine mapped linearly onto [0, 1] between these: unrelated text sits below 0.2, answers above 0.6. */
const EMBEDDING_RELEVANCE_RANGE = [0.2, 0.6] as const;

// Source windows of one and two consecutive sentences: an answer sentence often joins two.
const WINDOW_SENTENCES = 2;

/** Interrogatives and request verbs that shape a question without saying what it is about. */
const QUESTION_TERMS = new Set(
  tokenize(
    'what which who whom whose when where why how do does did done can could would should shall may might must ' +
      'is are was were has have had tell explain describe list give show please me us i you find know kind type way',
  ),
);

export const SCORER_DESCRIPTION = [
  'Without a judge model, answers are scored lexically, with the tokenizer retrieval uses (lowercased, stopwords dropped, Porter-stemmed).',
  "faithfulness_score is the share of the answer's statements that the retrieved sources support.",
  "Statements are the answer's sentences, with citation markers such as [1] and list bullets removed and fragments of fewer than three content terms joined to a neighbour;",
  'sentences saying that the documents do not contain the answer are not statements.',
  'A statement is supported when one or two consecutive sentences of a single source contain every number it states and at least 60% of its distinct content terms;',
  "when an embedding model is configured, also when they contain its numbers and at least 30% of its terms and the statement's embedding has cosine similarity of at least 0.6 with a source passage.",
  'An answer that only declines scores 1, as it asserts nothing the sources could contradict; an empty answer scores 0.',
  "context_relevance_score is how much of the question the sources cover: for each source, the share of the question's content terms",
  '(interrogatives such as what or how left out) it contains, or with an embedding model the greater of that share and the question–passage cosine scaled from 0.2–0.6 onto 0–1;',
  'the score is the mean of the best source and the average source, so one on-point source among unrelated ones scores about one half. No sources score 0.',
  "Lexical scores see wording, not meaning: a negated or contradicted claim that reuses the sources' words still counts as supported.",
].join(' ');

const NUMBER = /\p{N}/u;

/** Share of `wanted` found in `present`; 0 when nothing is wanted. */
function recall(wanted: ReadonlySet<string>, present: ReadonlySet<string>): number {
  if (wanted.size === 0) return 0;
  let found = 0;
  for (const term of wanted) if (present.has(term)) found++;
  return found / wanted.size;
}

/**
 * Best term recall of a statement over the source windows. A window that lacks one of the
 * statement's numbers does not count: a wrong figure or date is the commonest hallucination
 * and only one term, which recall alone would forgive.
 */
export function supportRecall(terms: readonly string[], windows: readonly ReadonlySet<string>[]): number {
  const wanted = new Set(terms);
  const numbers = [...wanted].filter((term) => NUMBER.test(term));
  let best = 0;
  for (const window of windows) {
    if (numbers.every((number) => window.has(number))) best = Math.max(best, recall(wanted, window));
  }
  return best;
}

export function sourceWindows(text: string): Set<string>[] {
  const sentenceTerms = splitSentences(text).map((sentence) => contentTerms(sentence));
  const windows: Set<string>[] = [];
  for (let start = 0; start < sentenceTerms.length; start++) {
    for (let size = 1; size <= WINDOW_SENTENCES && start + size <= sentenceTerms.length; size++) {
      windows.push(new Set(sentenceTerms.slice(start, start + size).flat()));
    }
  }
  return windows;
}

async function embedAll(embed: NonNullable<LexicalScoreOptions['embed']>, texts: string[]): Promise<number[][]> {
  if (texts.length === 0) return [];
  const vectors = await embed(texts);
  if (!Array.isArray(vectors) || vectors.length !== texts.length) {
    throw new Error(`Embedding returned ${Array.isArray(vectors) ? vectors.length : 'no'} vectors for ${texts.length} texts`);
  }
  return vectors;
}

/**
 * The non-LLM scorer described in SCORER_DESCRIPTION. Deterministic for a given input
 * (and embedding function). An `embed` failure is passed on for the caller to record.
 */
export async function lexicalScores(input: ScoreInput, options: LexicalScoreOptions = {}): Promise<Scores> {
  checkScoreInput(input);
  const sources = input.sources.filter((source) => source.text.trim().length > 0);
  const { statements, refusals } = answerStatements(input.answer);
  const questionTerms = new Set(contentTerms(input.question).filter((term) => !QUESTION_TERMS.has(term)));

  const windows = sources.flatMap((source) => sourceWindows(source.text));
  const statementRecall = statements.map((statement) => supportRecall(statement.terms, windows));
  const sourceCoverage = sources.map((source) => recall(questionTerms, new Set(contentTerms(source.text))));

  const statementCosine = statements.map(() => 0);
  let sourceCosine: number[] = sources.map(() => 0);
  if (options.embed && sources.length > 0) {
    // Only the statements embeddings could still rescue are sent, with the question and the passages.
    const candidates = statements.flatMap((statement, i) => {
      const lexical = statementRecall[i] as number;
      return lexical < LEXICAL_SUPPORT_THRESHOLD && lexical >= LEXICAL_PARTIAL_SUPPORT ? [{ statement, i }] : [];
    });
    const texts = [input.question, ...sources.map((source) => source.text), ...candidates.map(({ statement }) => statement.text)];
    const vectors = await embedAll(options.embed, texts);
    const question = vectors[0] as number[];
    const passages = vectors.slice(1, 1 + sources.length);
    sourceCosine = passages.map((passage) => denseCosine(question, passage));
    candidates.forEach(({ i }, k) => {
      const vector = vectors[1 + sources.length + k] as number[];
      statementCosine[i] = Math.max(...passages.map((passage) => denseCosine(vector, passage)));
    });
  }

  return {
    faithfulness_score: clampScore(faithfulness(statements, refusals, statementRecall, statementCosine)),
    context_relevance_score: clampScore(contextRelevance(sourceCoverage, sourceCosine, options.embed !== undefined)),
  };
}

function faithfulness(statements: Statement[], refusals: number, lexical: number[], cosine: number[]): number {
  if (statements.length === 0) return refusals > 0 ? 1 : 0;
  const supported = statements.filter((_, i) => {
    const recallShare = lexical[i] as number;
    if (recallShare >= LEXICAL_SUPPORT_THRESHOLD) return true;
    return recallShare >= LEXICAL_PARTIAL_SUPPORT && (cosine[i] as number) >= EMBEDDING_SUPPORT_THRESHOLD;
  });
  return supported.length / statements.length;
}

function contextRelevance(coverage: number[], cosine: number[], embedded: boolean): number {
  if (coverage.length === 0) return 0;
  const [low, high] = EMBEDDING_RELEVANCE_RANGE;
  const perSource = coverage.map((share, i) =>
    embedded ? Math.max(share, clampScore(((cosine[i] as number) - low) / (high - low))) : share,
  );
  const mean = perSource.reduce((sum, value) => sum + value, 0) / perSource.length;
  return (Math.max(...perSource) + mean) / 2;
}
