export type IndexType = 'DENSE' | 'SPARSE' | 'HYBRID';
export type SimilarityFunction = 'COSINE' | 'EUCLIDEAN' | 'DOT_PRODUCT';
export type Metadata = Record<string, unknown>;

export interface SparseVector {
  indices: number[];
  values: number[];
}

/** The fixed shape of an index, like the settings chosen when an Upstash index is created. */
export interface IndexShape {
  indexType: IndexType;
  /** 0 for sparse-only indexes. */
  dimension: number;
  similarityFunction: SimilarityFunction;
}

export interface HnswSettings {
  connectivity: number;
  expansionAdd: number;
  expansionSearch: number;
}

/** One stored vector. `key` changes whenever the vector is rewritten, so engines never see a stale entry. */
export interface StoredVector {
  id: string;
  /** Insertion order; range cursors point into it, so paging survives deletes. */
  seq: number;
  key: number;
  vector?: Float32Array;
  sparseVector?: SparseVector;
  metadata?: Metadata;
  data?: string;
}

/** A validated write: what upsert and update hand to a namespace. */
export interface VectorWrite {
  id: string;
  vector?: Float32Array;
  sparseVector?: SparseVector;
  metadata?: Metadata;
  data?: string;
}

export type FusionAlgorithm = 'RRF' | 'DBSF';
export type QueryMode = 'HYBRID' | 'DENSE' | 'SPARSE';

export interface Includes {
  includeMetadata: boolean;
  includeVectors: boolean;
  includeData: boolean;
}

export interface VectorQuery extends Includes {
  vector?: Float32Array;
  sparseVector?: SparseVector;
  topK: number;
  filter?: (metadata: Metadata | undefined) => boolean;
  weightingStrategy?: 'IDF';
  fusionAlgorithm: FusionAlgorithm;
  queryMode: QueryMode;
}

export interface Scored {
  record: StoredVector;
  score: number;
}
