import { denseCosine, sparseCosine, termCounts, toSparseTerms } from '#core/retrieval/similarity.ts';
import type { SparseVector } from '#core/retrieval/sparse.ts';
import { tokenize } from '#core/retrieval/sparse.ts';

/** One result of an Upstash Vector query, with its vectors when the query asked for them. */
export interface Candidate {
  id: string;
  score: number;
  vector?: number[];
  sparseVector?: SparseVector;
  metadata: Record<string, unknown>;
}

/** A collection's `retrieval_strategy` with its parameters. */
export type Strategy = { kind: 'similarity' } | { kind: 'mmr'; lambda: number } | { kind: 'threshold'; minScore: number | null };

/** Which of the index's vectors the query used, and how they were fused; it decides what a score means. */
export type QueryMode = 'dense' | 'sparse' | 'hybrid' | 'dbsf' | 'convex';

/** Halfway between relevance and novelty: LangChain's and LlamaIndex's default too. */
export const DEFAULT_MMR_LAMBDA = 0.5;

/**
 * The cut-off a `threshold` strategy uses when it names none. Upstash scores are on a
 * different scale in each query mode, so one number cannot serve all three:
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
 * - hybrid: Upstash fuses the dense and sparse lists with reciprocal rank fusion (RRF, its
 *   default), each list adding 1 / (60 + rank). The fused score keeps only ranks, so no score cut can say "relevant";
 *   what it can say is that both retrievers found the chunk. One list gives at most 1/61;
 *   a chunk in both lists at ranks below 60 gets at least 2/119 > 1/60. So 1/60 keeps
 *   exactly the chunks that both the semantic and the keyword search returned.
 * - dbsf: Upstash scales each list by its mean ± 3 standard deviations onto [0, 1] and adds
 *   them, so the fused score is in [0, 2]; 0.5 keeps a chunk strong in one list or fair in both.
 * - convex: each list min–max scaled onto [0, 1] over the candidates, then mixed (fusion.ts),
 *   so 0.5 keeps chunks at least halfway between the worst and the best candidate.
 */
export const DEFAULT_SCORE_THRESHOLD: Readonly<Record<QueryMode, number>> = {
  dense: 0.65,
  sparse: 1,
  hybrid: 1 / 60,
  dbsf: 0.5,
  convex: 0.5,
};

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
export function applyStrategy(candidates: readonly Candidate[], strategy: Strategy, topK: number, mode: QueryMode): Candidate[] {
  checkTopK(topK);
  for (const candidate of candidates) {
    if (!Number.isFinite(candidate.score)) throw new RangeError(`Candidate ${candidate.id} has no finite score`);
  }
  switch (strategy.kind) {
    case 'similarity':
      return byScore(candidates).slice(0, topK);
    case 'threshold': {
      const minScore = strategy.minScore ?? DEFAULT_SCORE_THRESHOLD[mode];
      if (!Number.isFinite(minScore)) throw new RangeError(`Score threshold must be a finite number, got ${minScore}`);
      return byScore(candidates.filter((candidate) => candidate.score >= minScore)).slice(0, topK);
    }
    case 'mmr':
      return maximalMarginalRelevance(candidates, strategy.lambda, topK);
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
function maximalMarginalRelevance(candidates: readonly Candidate[], lambda: number, topK: number): Candidate[] {
  if (!Number.isFinite(lambda) || lambda < 0 || lambda > 1)
    throw new RangeError(`MMR lambda must be between 0 and 1, got ${lambda}`);
  const pool = byScore(candidates);
  const scores = pool.map((candidate) => candidate.score);
  const best = Math.max(...scores);
  const worst = Math.min(...scores);
  const relevance = pool.map((candidate) => (best === worst ? 1 : (candidate.score - worst) / (best - worst)));
  const similarity = similarityMeasure(pool);

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

/**
 * Cosine between two pool members, on one representation for the whole pool so that all
 * similarities are on one scale: the dense vectors when every candidate has one, else the
 * sparse (BM25) vectors when every candidate has one, else the term counts of
 * `metadata.text`. A candidate with no text then counts as unlike every other.
 */
function similarityMeasure(pool: readonly Candidate[]): (i: number, j: number) => number {
  const dense = pool.map((candidate) => candidate.vector);
  if (dense.every((vector) => vector !== undefined && vector.length > 0)) {
    return (i, j) => denseCosine(dense[i] as number[], dense[j] as number[]);
  }
  if (pool.every((candidate) => candidate.sparseVector !== undefined)) {
    const sparse = pool.map((candidate) => toSparseTerms(candidate.sparseVector as SparseVector));
    return (i, j) => sparseCosine(sparse[i] as (typeof sparse)[number], sparse[j] as (typeof sparse)[number]);
  }
  const terms = pool.map((candidate) =>
    termCounts(typeof candidate.metadata.text === 'string' ? tokenize(candidate.metadata.text) : []),
  );
  return (i, j) => sparseCosine(terms[i] as (typeof terms)[number], terms[j] as (typeof terms)[number]);
}
