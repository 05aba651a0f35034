import { Index } from '@upstash/vector';
import type { SparseVector } from '../retrieval/sparse.ts';
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

/** Upstash Vector, one namespace per collection (or per user for the personal space). */
export interface VectorStore {
  upsert<M extends Record<string, unknown>>(namespace: string, records: VectorRecord<M>[]): Promise<void>;
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
