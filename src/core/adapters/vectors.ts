import { FusionAlgorithm, Index, WeightingStrategy } from '@upstash/vector';
import type { SparseVector } from '#retrieval/sparse.ts';
import { describeCause, UpstreamError } from './upstream-error.ts';

export interface VectorSettings {
  url: string;
  token: string;
}

export interface VectorRecord<M> {
  id: string;
  /** Absent when no dense embedding model is configured: the index is then sparse-only. */
  vector?: number[];
  sparseVector: SparseVector;
  metadata: M;
}

export interface VectorQuery {
  /** The question's dense embedding; absent on a sparse-only index. */
  vector?: number[];
  sparseVector: SparseVector;
  topK: number;
  /** Also return the stored vectors (MMR compares candidates with each other). */
  includeVectors?: boolean;
  /** With both vectors: fuse the two lists (default, by `fusion`), or use one of them alone. */
  mode?: 'hybrid' | 'dense' | 'sparse';
  /** How Upstash fuses a hybrid query; default RRF. */
  fusion?: 'RRF' | 'DBSF';
  /** An Upstash metadata filter, written only by src/retrieval/filter.ts (never user text). */
  filter?: string;
}

export interface VectorMatch {
  id: string;
  score: number;
  vector?: number[];
  sparseVector?: SparseVector;
  metadata: Record<string, unknown>;
}

/** Upstash Vector, one namespace per collection (or per user for the personal space). */
export interface VectorStore {
  /**
   * Hybrid (dense + sparse, fused as `fusion` says) when a dense vector is given, else sparse
   * alone; `mode` may pick one list. Sparse scores are weighted by the namespace's IDF (BM25).
   */
  query(namespace: string, request: VectorQuery): Promise<VectorMatch[]>;
  upsert<M extends Record<string, unknown>>(namespace: string, records: VectorRecord<M>[]): Promise<void>;
  /** The stored records of these ids, with their vectors and metadata; ids not there are left out. */
  fetch(namespace: string, ids: string[]): Promise<VectorRecord<Record<string, unknown>>[]>;
  delete(namespace: string, ids: string[]): Promise<void>;
  deleteNamespace(namespace: string): Promise<void>;
}

const BATCH = 500;

export function createVectorStore(settings: VectorSettings): VectorStore {
  const index = new Index({ url: settings.url, token: settings.token, retry: { retries: 2 } });
  const guard = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      throw new UpstreamError('vectors', `${what}: ${describeCause(error)}`, { cause: error });
    }
  };

  return {
    query: (namespace, request) =>
      guard('query', async () => {
        // A hybrid index searches only the lists it is given vectors for.
        const vectors =
          request.vector && request.mode === 'dense'
            ? { vector: request.vector }
            : request.vector && request.mode !== 'sparse'
              ? {
                  vector: request.vector,
                  sparseVector: request.sparseVector,
                  fusionAlgorithm: request.fusion === 'DBSF' ? FusionAlgorithm.DBSF : FusionAlgorithm.RRF,
                }
              : { sparseVector: request.sparseVector };
        const results = await index.namespace(namespace).query({
          ...vectors,
          weightingStrategy: WeightingStrategy.IDF,
          topK: request.topK,
          includeMetadata: true,
          includeVectors: request.includeVectors ?? false,
          ...(request.filter ? { filter: request.filter } : {}),
        });
        return results.map((result) => ({
          id: String(result.id),
          score: result.score,
          ...(result.vector && result.vector.length > 0 ? { vector: result.vector } : {}),
          ...(result.sparseVector ? { sparseVector: result.sparseVector } : {}),
          metadata: (result.metadata ?? {}) as Record<string, unknown>,
        }));
      }),

    upsert: (namespace, records) =>
      guard('upsert', async () => {
        for (let i = 0; i < records.length; i += BATCH) {
          await index.namespace(namespace).upsert(
            records.slice(i, i + BATCH).map((record) => ({
              id: record.id,
              ...(record.vector ? { vector: record.vector } : {}),
              sparseVector: record.sparseVector,
              metadata: record.metadata,
            })),
          );
        }
      }),

    fetch: (namespace, ids) =>
      guard('fetch', async () => {
        const found: VectorRecord<Record<string, unknown>>[] = [];
        for (let i = 0; i < ids.length; i += BATCH) {
          const page = await index
            .namespace(namespace)
            .fetch(ids.slice(i, i + BATCH), { includeVectors: true, includeMetadata: true });
          for (const record of page) {
            if (!record) continue;
            found.push({
              id: String(record.id),
              ...(record.vector && record.vector.length > 0 ? { vector: record.vector } : {}),
              sparseVector: record.sparseVector ?? { indices: [], values: [] },
              metadata: (record.metadata ?? {}) as Record<string, unknown>,
            });
          }
        }
        return found;
      }),

    delete: (namespace, ids) =>
      guard('delete', async () => {
        for (let i = 0; i < ids.length; i += BATCH) await index.namespace(namespace).delete(ids.slice(i, i + BATCH));
      }),

    deleteNamespace: (namespace) =>
      guard('delete namespace', async () => {
        const namespaces = await index.listNamespaces();
        // The default namespace "" can only be reset; collections never use it.
        if (namespace !== '' && namespaces.includes(namespace)) await index.deleteNamespace(namespace);
      }),
  };
}
