import { denseCosine, sparseCosine, termCounts, toSparseTerms } from './similarity.ts';
import type { SparseVector } from './sparse.ts';
import { tokenize } from './sparse.ts';

/** One result of an Upstash Vector query, with its vectors when the query asked for them. */
export interface Candidate {
  id: string;
  score: number;
  vector?: number[];
  sparseVector?: SparseVector;
  metadata: Record<string, unknown>;
  /** Where it was found, when a question searched several namespaces (across-namespaces.ts). */
  namespace?: string;
}

/** A collection's `retrieval_strategy` with its parameters. */
export type Strategy =
  | { kind: 'similarity' }
  | { kind: 'mmr'; lambda: number }
  // denseCutoff: the embedding model's own default for dense scores (dense-cutoff.ts), where minScore is null.
  | { kind: 'threshold'; minScore: number | null; denseCutoff?: number };

/** Which of the index's vectors the query used, and how they were fused; it decides what a score means. */
export type QueryMode = 'dense' | 'sparse' | 'hybrid' | 'dbsf' | 'convex';

/** Halfway between relevance and novelty: LangChain's and LlamaIndex's default too. */
export const DEFAULT_MMR_LAMBDA = 0.5;

/**
 * The cut-off a `threshold` strategy uses when it names none, for the score of each single list.
 * Upstash scores are on a different scale in each, so one number cannot serve both:
 *
 * - dense: Upstash reports COSINE similarity as (1 + cos) / 2 in [0, 1]. 0.65 is cos 0.3.
 *   With all-MiniLM-L6-v2 and OpenAI's text-embedding-3 models, a question and a passage
 *   that answers it are usually 0.35–0.7 apart in cosine, unrelated text 0–0.2.
 * - sparse: the score is Σ idf(t) · w(t, d) over the query's terms, where w is the BM25
 *   weight stored at ingestion (1.0 for one occurrence in a chunk of average length) and
 *   idf(t) = ln(1 + (N − n + 0.5) / (n + 0.5)). idf reaches 1 when a term is in fewer than
 *   about 37% of the namespace's chunks, so a score ≥ 1 means the chunk shares at least
 *   one distinctive term with the question (or several common ones), whatever the size of
 *   the collection. There is no upper bound to normalise against.
 *
 * A fused score (RRF, DBSF, convex) only places a chunk relative to the other candidates: the best
 * of an unrelated list still scores high. So a fused query's threshold is taken on the single lists
 * instead (`Evidence`): a chunk is kept when its dense or its sparse score passes that list's cut-off.
 */
export const DEFAULT_SCORE_THRESHOLD: Readonly<Record<'dense' | 'sparse', number>> = {
  dense: 0.65,
  sparse: 1,
};

/** A fused query's dense and sparse lists, asked for separately, for the default threshold. */
export interface Evidence {
  dense: readonly Candidate[];
  sparse: readonly Candidate[];
}

/** How a fused query's candidates are compared besides their fused score. */
export interface FusedContext {
  /** The dense side's weight in the fusion, for MMR's similarity: 0.5 for RRF and DBSF, alpha for convex. */
  denseWeight?: number;
  /** Required by a threshold with no minScore in a fused mode. */
  evidence?: Evidence;
}

const isFused = (mode: QueryMode) => mode !== 'dense' && mode !== 'sparse';

function passingEither(evidence: Evidence, denseCutoff = DEFAULT_SCORE_THRESHOLD.dense): Set<string> {
  return new Set([
    ...evidence.dense.filter((c) => c.score >= denseCutoff).map((c) => c.id),
    ...evidence.sparse.filter((c) => c.score >= DEFAULT_SCORE_THRESHOLD.sparse).map((c) => c.id),
  ]);
}

/** MMR reranks a pool larger than the answer; more than this costs latency for little diversity. */
export const MAX_MMR_POOL = 100;
const MIN_MMR_POOL = 20;
const MMR_POOL_FACTOR = 4;

/** How many candidates to ask the index for so that `applyStrategy` can return `topK`. */
export function candidatePoolSize(strategy: Strategy, topK: number): number {
  checkTopK(topK);
  if (strategy.kind !== 'mmr') return topK;
  return Math.max(topK, Math.min(MAX_MMR_POOL, Math.max(MMR_POOL_FACTOR * topK, MIN_MMR_POOL)));
}

/**
 * At most `topK` candidates, best first, chosen by the strategy. Scores are returned as
 * the index gave them, also after MMR (whose order is its selection order).
 * Throws RangeError on a bad topK, λ or threshold, or a candidate without a finite score.
 */
export function applyStrategy(
  candidates: readonly Candidate[],
  strategy: Strategy,
  topK: number,
  mode: QueryMode,
  fused: FusedContext = {},
): Candidate[] {
  checkTopK(topK);
  for (const candidate of candidates) {
    if (!Number.isFinite(candidate.score)) throw new RangeError(`Candidate ${candidate.id} has no finite score`);
  }
  switch (strategy.kind) {
    case 'similarity':
      return byScore(candidates).slice(0, topK);
    case 'threshold': {
      if (strategy.minScore === null && isFused(mode)) {
        if (!fused.evidence) throw new RangeError(`A ${mode} query's default threshold needs its dense and sparse lists`);
        const passing = passingEither(fused.evidence, strategy.denseCutoff);
        return byScore(candidates.filter((candidate) => passing.has(candidate.id))).slice(0, topK);
      }
      const modelDefault = mode === 'dense' ? strategy.denseCutoff : undefined;
      const minScore = strategy.minScore ?? modelDefault ?? DEFAULT_SCORE_THRESHOLD[mode as 'dense' | 'sparse'];
      if (!Number.isFinite(minScore)) throw new RangeError(`Score threshold must be a finite number, got ${minScore}`);
      return byScore(candidates.filter((candidate) => candidate.score >= minScore)).slice(0, topK);
    }
    case 'mmr':
      return maximalMarginalRelevance(candidates, strategy.lambda, topK, denseWeightOf(mode, fused));
  }
}

function checkTopK(topK: number): void {
  if (!Number.isInteger(topK) || topK < 0) throw new RangeError(`topK must be a whole number ≥ 0, got ${topK}`);
}

// Ids compared by code unit, not localeCompare, so the order is the same in every runtime.
function compareIds(a: Candidate, b: Candidate): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function byScore(candidates: readonly Candidate[]): Candidate[] {
  return [...candidates].sort((a, b) => b.score - a.score || compareIds(a, b));
}

/**
 * Greedy MMR (Carbonell & Goldstein, 1998): each step takes the candidate maximising
 * λ·relevance − (1 − λ)·(its highest similarity to those already taken). Relevance is the
 * score min–max scaled over the pool, so λ weighs like against like whatever the query mode;
 * similarity is cosine, in [−1, 1].
 */
function maximalMarginalRelevance(
  candidates: readonly Candidate[],
  lambda: number,
  topK: number,
  denseWeight: number,
): Candidate[] {
  if (!Number.isFinite(lambda) || lambda < 0 || lambda > 1)
    throw new RangeError(`MMR lambda must be between 0 and 1, got ${lambda}`);
  const pool = byScore(candidates);
  const scores = pool.map((candidate) => candidate.score);
  const best = Math.max(...scores);
  const worst = Math.min(...scores);
  const relevance = pool.map((candidate) => (best === worst ? 1 : (candidate.score - worst) / (best - worst)));
  const similarity = similarityMeasure(pool, denseWeight);

  const maxSimilarity = pool.map(() => Number.NEGATIVE_INFINITY);
  const taken = new Set<number>();
  const selected: Candidate[] = [];
  while (selected.length < Math.min(topK, pool.length)) {
    let choice = -1;
    let choiceValue = Number.NEGATIVE_INFINITY;
    // The pool is sorted by score then id, so keeping the first of equal values breaks ties the same way.
    for (let i = 0; i < pool.length; i++) {
      if (taken.has(i)) continue;
      const redundancy = selected.length === 0 ? 0 : (maxSimilarity[i] as number);
      const value = lambda * (relevance[i] as number) - (1 - lambda) * redundancy;
      if (value > choiceValue) {
        choice = i;
        choiceValue = value;
      }
    }
    taken.add(choice);
    selected.push(pool[choice] as Candidate);
    for (let i = 0; i < pool.length; i++) {
      if (!taken.has(i)) maxSimilarity[i] = Math.max(maxSimilarity[i] as number, similarity(i, choice));
    }
  }
  return selected;
}

function denseWeightOf(mode: QueryMode, fused: FusedContext): number {
  if (mode === 'dense') return 1;
  if (mode === 'sparse') return 0;
  return fused.denseWeight ?? 0.5;
}

/**
 * Cosine between two pool members, on one representation for the whole pool so that all
 * similarities are on one scale. With both vectors on every candidate and a fused query, it is
 * the cosine of the two unit vectors set side by side, scaled by the fusion's weights:
 * w · dense cosine + (1 − w) · sparse cosine, so a passage that says the same in other words and one
 * that repeats the same words both count as redundant. Otherwise the dense vectors when every candidate
 * has one (and the query used them), else the sparse (BM25) vectors when every candidate has one, else
 * the term counts of `metadata.text`. A candidate with no text then counts as unlike every other.
 */
function similarityMeasure(pool: readonly Candidate[], denseWeight: number): (i: number, j: number) => number {
  const dense = pool.map((candidate) => candidate.vector);
  const hasDense = denseWeight > 0 && dense.every((vector) => vector !== undefined && vector.length > 0);
  const hasSparse = pool.every((candidate) => candidate.sparseVector !== undefined);
  const sparse = hasSparse ? pool.map((candidate) => toSparseTerms(candidate.sparseVector as SparseVector)) : [];
  const denseSimilarity = (i: number, j: number) => denseCosine(dense[i] as number[], dense[j] as number[]);
  const sparseSimilarity = (i: number, j: number) =>
    sparseCosine(sparse[i] as (typeof sparse)[number], sparse[j] as (typeof sparse)[number]);
  if (hasDense && hasSparse && denseWeight < 1) {
    return (i, j) => denseWeight * denseSimilarity(i, j) + (1 - denseWeight) * sparseSimilarity(i, j);
  }
  if (hasDense) return denseSimilarity;
  if (hasSparse) return sparseSimilarity;
  const terms = pool.map((candidate) =>
    termCounts(typeof candidate.metadata.text === 'string' ? tokenize(candidate.metadata.text) : []),
  );
  return (i, j) => sparseCosine(terms[i] as (typeof terms)[number], terms[j] as (typeof terms)[number]);
}
