import type { z } from 'zod';
import type { SharedSettings } from '../config.ts';
import { createModels, type ModelSettings, type Models, type RoleModel } from './models.ts';
import { createQueue, type Queue, type QueueSettings } from './queue.ts';
import { createObjectStore, type ObjectStore } from './storage.ts';
import { createVectorStore, type VectorStore } from './vectors.ts';

type Shared = z.output<z.ZodObject<typeof SharedSettings>>;

/**
 * Every worker talks to a model endpoint; the writing, vision and judge models are the API's, the
 * ingest worker's and the scoring worker's. Each role may name its own endpoint.
 */
type RoleKeys<R extends string> = Partial<Record<`${R}_MODEL` | `${R}_BASE_URL` | `${R}_API_KEY`, string>>;
type ModelKeys = Pick<Shared, 'OPENAI_BASE_URL' | 'OPENAI_API_KEY' | 'EMBEDDING_DIMENSIONS'> &
  RoleKeys<'CHAT' | 'EMBEDDING' | 'VISION' | 'JUDGE' | 'RERANK'>;
type StoreKeys = Pick<Shared, 'SUPABASE_URL' | 'SUPABASE_SERVICE_ROLE_KEY' | 'STORAGE_BUCKET'>;
type VectorKeys = Pick<Shared, 'UPSTASH_VECTOR_REST_URL' | 'UPSTASH_VECTOR_REST_TOKEN'>;
type QueueKeys = Pick<Shared, 'QSTASH_URL'> & { QSTASH_TOKEN?: string; INGEST_PARALLELISM_PER_USER?: number };

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
      models: createModels(modelSettings(settings)),
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
            queue: settings.QSTASH_TOKEN
              ? createQueue(queueSettings(settings.QSTASH_URL, settings.QSTASH_TOKEN, settings))
              : null,
          }
        : {}),
    };
    cache.set(settings, adapters);
  }
  return adapters as AdaptersFor<S>;
}

/** Flow control per key (the ingest steps' per-user keys) where a parallelism is set; 0 or unset: none. */
function queueSettings(url: string, token: string, settings: Pick<QueueKeys, 'INGEST_PARALLELISM_PER_USER'>): QueueSettings {
  const parallelism = settings.INGEST_PARALLELISM_PER_USER;
  return { url, token, ...(parallelism ? { flowControl: { parallelism } } : {}) };
}

/** A role with a model, on its own endpoint where it names one. */
function role<R extends 'CHAT' | 'EMBEDDING' | 'VISION' | 'JUDGE' | 'RERANK'>(
  settings: ModelKeys,
  name: R,
): RoleModel | undefined {
  const model = settings[`${name}_MODEL`];
  if (!model) return undefined;
  const baseUrl = settings[`${name}_BASE_URL`];
  const apiKey = settings[`${name}_API_KEY`];
  return { model, ...(baseUrl ? { baseUrl } : {}), ...(apiKey ? { apiKey } : {}) };
}

function modelSettings(settings: ModelKeys): ModelSettings {
  const embedding = role(settings, 'EMBEDDING');
  return {
    baseUrl: settings.OPENAI_BASE_URL,
    apiKey: settings.OPENAI_API_KEY,
    chat: role(settings, 'CHAT'),
    embedding: embedding && { ...embedding, dimensions: settings.EMBEDDING_DIMENSIONS },
    vision: role(settings, 'VISION'),
    judge: role(settings, 'JUDGE'),
    rerank: role(settings, 'RERANK'),
  };
}
