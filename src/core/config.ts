import { z } from 'zod';
import { DomainError } from './errors.ts';
import { DAILY_INGEST_CHUNKS, INGEST_PARALLELISM_PER_USER } from './limits.ts';
import { logUnowned } from './log.ts';
import { parseTrustedOrigins } from './urls/url-policy.ts';

export const blankIsUnset = (v: unknown) => (v === '' ? undefined : v);
export const optionalUrl = z.preprocess(blankIsUnset, z.url().optional());

const optionalKey = z.preprocess(blankIsUnset, z.string().optional());

/** ROLE_BASE_URL and ROLE_API_KEY: a model role's own provider, each falling back to OPENAI_*. */
export function roleEndpoint<R extends string>(role: R) {
  return { [`${role}_BASE_URL`]: optionalUrl, [`${role}_API_KEY`]: optionalKey } as Record<`${R}_BASE_URL`, typeof optionalUrl> &
    Record<`${R}_API_KEY`, typeof optionalKey>;
}

/** A comma- or space-separated list of origins; a bad entry names the setting. */
function trustedOrigins(name: string) {
  return z
    .string()
    .default('')
    .transform((value, ctx) => {
      try {
        return parseTrustedOrigins(value, name);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    });
}

/** Settings the workers share; each worker's own schema picks from them. */
export const SharedSettings = {
  HYPERDRIVE: z.object({ connectionString: z.string().min(1) }, 'the Hyperdrive binding HYPERDRIVE is missing'),
  SUPABASE_URL: z.url('SUPABASE_URL must be the Supabase project URL'),
  SUPABASE_SERVICE_ROLE_KEY: z.string().min(1, 'SUPABASE_SERVICE_ROLE_KEY is required'),
  STORAGE_BUCKET: z.string().min(1).default('documents'),
  QSTASH_URL: z.url().default('https://qstash.upstash.io'),
  UPSTASH_VECTOR_REST_URL: z.url('UPSTASH_VECTOR_REST_URL must be the Upstash Vector REST URL'),
  UPSTASH_VECTOR_REST_TOKEN: z.string().min(1, 'UPSTASH_VECTOR_REST_TOKEN is required'),
  /** The ingest worker's public URL: QStash delivers there, and it checks signatures against it. */
  INGEST_WORKER_URL: optionalUrl,
  DNS_OVER_HTTPS_URL: z.url().default('https://cloudflare-dns.com/dns-query'),
  /** Any OpenAI-compatible endpoint; unset means OpenAI itself. Every model role falls back to it. */
  OPENAI_BASE_URL: optionalUrl,
  OPENAI_API_KEY: z.string().min(1, 'OPENAI_API_KEY is required'),
  /** The embedding role's own endpoint, when it is not the shared one (each worker adds its other roles). */
  ...roleEndpoint('EMBEDDING'),
  /** Unset: no dense vectors; the index must then be a sparse one, and retrieval is BM25-style alone. */
  EMBEDDING_MODEL: z.preprocess(blankIsUnset, z.string().optional()),
  EMBEDDING_DIMENSIONS: z.preprocess(blankIsUnset, z.coerce.number().int().positive().optional()),
  /** Chunks one user's documents may make per UTC day (src/core/limits.ts says why). */
  INGEST_DAILY_CHUNKS_PER_USER: z.coerce.number().int().positive().default(DAILY_INGEST_CHUNKS),
  /**
   * Ingest steps of one user's documents under way at once (QStash flow control, one key per user), so that
   * one user's files never hold back another's; 0 turns flow control off.
   */
  INGEST_PARALLELISM_PER_USER: z.coerce.number().int().min(0).default(INGEST_PARALLELISM_PER_USER),
  /** Origins exempt from the public-address rule for URL ingestion (intranet deployments, local test pages). */
  INGEST_TRUSTED_ORIGINS: trustedOrigins('INGEST_TRUSTED_ORIGINS'),
  /**
   * Origins exempt from the public-address rule for webhook receivers, empty by default. Apart from
   * INGEST_TRUSTED_ORIGINS on purpose: reading an intranet page is not POSTing to any path of its origin.
   */
  WEBHOOK_TRUSTED_ORIGINS: trustedOrigins('WEBHOOK_TRUSTED_ORIGINS'),
};

const cache = new WeakMap<object, object>();

/**
 * Parsed once per env object. A missing or bad setting becomes a 500 whose detail
 * names the setting (never its value), and a log line for the operator.
 */
export function parseSettings<S extends z.ZodType<object>>(schema: S, env: object): z.infer<S> {
  const cached = cache.get(env);
  if (cached) return cached as z.infer<S>;
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const names = [...new Set(parsed.error.issues.map((issue) => String(issue.path[0] ?? '?')))];
    logUnowned('error', 'invalid_configuration', {
      settings: names.join(', '),
      message: `Invalid configuration: ${parsed.error.issues.map((i) => `${String(i.path[0])}: ${i.message}`).join('; ')}`,
    });
    throw new DomainError('misconfigured', `Service misconfigured: check setting ${names.join(', ')}`);
  }
  cache.set(env, parsed.data);
  return parsed.data;
}
