import type { z } from 'zod';
import type { SharedSettings } from '../config.ts';
import { createModels, type Models } from './models.ts';
import { createQueue, type Queue } from './queue.ts';
import { createObjectStore, type ObjectStore } from './storage.ts';
import { createVectorStore, type VectorStore } from './vectors.ts';

type Shared = z.output<z.ZodObject<typeof SharedSettings>>;

/** Every worker talks to the model endpoint; the writing and vision models are the API's and the ingest worker's. */
type ModelKeys = Pick<Shared, 'OPENAI_BASE_URL' | 'OPENAI_API_KEY' | 'EMBEDDING_MODEL' | 'EMBEDDING_DIMENSIONS'> & {
  CHAT_MODEL?: string;
  VISION_MODEL?: string;
};
type StoreKeys = Pick<Shared, 'SUPABASE_URL' | 'SUPABASE_SERVICE_ROLE_KEY' | 'STORAGE_BUCKET'>;
type VectorKeys = Pick<Shared, 'UPSTASH_VECTOR_REST_URL' | 'UPSTASH_VECTOR_REST_TOKEN'>;
type QueueKeys = Pick<Shared, 'QSTASH_URL'> & { QSTASH_TOKEN?: string };

export type AdapterSettings = ModelKeys & Partial<StoreKeys & VectorKeys & QueueKeys>;

/**
 * The adapters a worker's settings configure: the models always, storage, vectors and the
 * queue when it has their settings. A queue whose token may be unset (the API's, where it
 * turns ingestion off) is null without one.
 */
export type AdaptersFor<S extends AdapterSettings> = { models: Models } & (S extends StoreKeys
  ? { store: ObjectStore }
  : unknown) &
  (S extends VectorKeys ? { vectors: VectorStore } : unknown) &
  (S extends { QSTASH_URL: string; QSTASH_TOKEN: string }
    ? { queue: Queue }
    : S extends QueueKeys
      ? { queue: Queue | null }
      : unknown);

/** Everything the API uses. */
export type Adapters = AdaptersFor<ModelKeys & StoreKeys & VectorKeys & QueueKeys>;

const cache = new WeakMap<AdapterSettings, object>();

/**
 * Clients hold no connections, so one set per isolate and settings object (each worker
 * parses its settings once) is reused across requests.
 */
export function adaptersFor<S extends AdapterSettings>(settings: S): AdaptersFor<S> {
  let adapters = cache.get(settings);
  if (!adapters) {
    adapters = {
      models: createModels({
        baseUrl: settings.OPENAI_BASE_URL,
        apiKey: settings.OPENAI_API_KEY,
        embeddingModel: settings.EMBEDDING_MODEL,
        embeddingDimensions: settings.EMBEDDING_DIMENSIONS,
        chatModel: settings.CHAT_MODEL,
        visionModel: settings.VISION_MODEL,
      }),
      ...(settings.SUPABASE_URL && settings.SUPABASE_SERVICE_ROLE_KEY && settings.STORAGE_BUCKET
        ? {
            store: createObjectStore({
              url: settings.SUPABASE_URL,
              serviceRoleKey: settings.SUPABASE_SERVICE_ROLE_KEY,
              bucket: settings.STORAGE_BUCKET,
            }),
          }
        : {}),
      ...(settings.UPSTASH_VECTOR_REST_URL && settings.UPSTASH_VECTOR_REST_TOKEN
        ? {
            vectors: createVectorStore({
              url: settings.UPSTASH_VECTOR_REST_URL,
              token: settings.UPSTASH_VECTOR_REST_TOKEN,
            }),
          }
        : {}),
      ...(settings.QSTASH_URL
        ? {
            queue: settings.QSTASH_TOKEN ? createQueue({ url: settings.QSTASH_URL, token: settings.QSTASH_TOKEN }) : null,
          }
        : {}),
    };
    cache.set(settings, adapters);
  }
  return adapters as AdaptersFor<S>;
}
