/** A collection's retrieval settings (PUT /collections/{id}/config), and what a collection without any uses. */
export const RETRIEVAL_STRATEGIES = ['similarity', 'mmr', 'threshold'] as const;
export type RetrievalStrategy = (typeof RETRIEVAL_STRATEGIES)[number];

export interface RetrievalConfig {
  chunk_size: number;
  retrieval_strategy: RetrievalStrategy;
}

export const DEFAULT_CONFIG: RetrievalConfig = { chunk_size: 1000, retrieval_strategy: 'similarity' };
