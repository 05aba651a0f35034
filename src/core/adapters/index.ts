import type { Config } from '../../api/config.ts';
import { createModels, type Models } from './models.ts';
import { createQueue, type Queue } from './queue.ts';
import { createObjectStore, type ObjectStore } from './storage.ts';
import { createVectorStore, type VectorStore } from './vectors.ts';

export interface Adapters {
  store: ObjectStore;
  vectors: VectorStore;
  /** Null when ingestion is disabled. */
  queue: Queue | null;
  models: Models;
}

const cache = new WeakMap<Config, Adapters>();

/** Clients hold no connections, so one set per isolate and config is reused across requests. */
export function adaptersFor(config: Config): Adapters {
  let adapters = cache.get(config);
  if (!adapters) {
    adapters = {
      store: createObjectStore({
        url: config.SUPABASE_URL,
        serviceRoleKey: config.SUPABASE_SERVICE_ROLE_KEY,
        bucket: config.STORAGE_BUCKET,
      }),
      vectors: createVectorStore({ url: config.UPSTASH_VECTOR_REST_URL, token: config.UPSTASH_VECTOR_REST_TOKEN }),
      queue: config.QSTASH_TOKEN ? createQueue({ url: config.QSTASH_URL, token: config.QSTASH_TOKEN }) : null,
      models: createModels({
        baseUrl: config.OPENAI_BASE_URL,
        apiKey: config.OPENAI_API_KEY,
        embeddingModel: config.EMBEDDING_MODEL,
        embeddingDimensions: config.EMBEDDING_DIMENSIONS,
        chatModel: config.CHAT_MODEL,
      }),
    };
    cache.set(config, adapters);
  }
  return adapters;
}
