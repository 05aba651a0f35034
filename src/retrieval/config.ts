/** A collection's retrieval settings (PUT /collections/{id}/config), and what a collection without any uses. */
export const RETRIEVAL_STRATEGIES = ['similarity', 'mmr', 'threshold'] as const;
export type RetrievalStrategy = (typeof RETRIEVAL_STRATEGIES)[number];

export interface RetrievalConfig {
  chunk_size: number;
  retrieval_strategy: RetrievalStrategy;
  /** Whether the fused candidates are reranked before the strategy (rerank.ts); a request may say otherwise. */
  rerank: boolean;
  /** How many of the best fused candidates are reranked. */
  rerank_candidates: number;
}

/**
 * Reranking is off by default and reranks 10 candidates when on: both chosen by measurement
 * (docs/benchmarks.md, "Issue 22: reranking").
 */
export const DEFAULT_CONFIG: RetrievalConfig = {
  chunk_size: 1000,
  retrieval_strategy: 'similarity',
  rerank: false,
  rerank_candidates: 10,
};
