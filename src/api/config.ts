import { z } from 'zod';
import { blankIsUnset, optionalUrl, parseSettings, roleEndpoint, SharedSettings } from '#core/config.ts';
import { parseFusion } from '#retrieval/fusion.ts';
import { DEFAULT_RERANK_BUDGET_MS } from '#retrieval/rerank.ts';

/** USD per million tokens, in and out, by the model's name as its setting gives it. */
const ModelPrices = z.record(
  z.string().min(1),
  z.object({ input: z.number().nonnegative(), output: z.number().nonnegative().default(0) }),
);
export type ModelPriceTable = z.output<typeof ModelPrices>;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Every setting the API worker reads. .dev.vars.example documents each one. */
export const ConfigSchema = z.object({
  ...SharedSettings,
  /** Without it (or INGEST_WORKER_URL) ingestion is disabled and its endpoints answer 503. */
  QSTASH_TOKEN: z.preprocess(blankIsUnset, z.string().optional()),
  /** The model that writes answers, through the OpenAI-compatible provider. */
  CHAT_MODEL: z.string().min(1).default('gpt-4o-mini'),
  ...roleEndpoint('CHAT'),
  /**
   * The reranking model, through Cohere's rerank API (@ai-sdk/cohere); its endpoint is RERANK_BASE_URL, else
   * OPENAI_BASE_URL, else Cohere's. Unset: no reranking, and a request that asks for it is told so (src/retrieval/rerank.ts).
   */
  RERANK_MODEL: z.preprocess(blankIsUnset, z.string().optional()),
  ...roleEndpoint('RERANK'),
  /** How long a question waits for the reranker before it goes on with the fused order. */
  RERANK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(DEFAULT_RERANK_BUDGET_MS),
  /** How dense and sparse results are combined (src/retrieval/fusion.ts); ignored without an embedding model. */
  RETRIEVAL_FUSION: z
    .string()
    .default('dbsf')
    .transform((value, ctx) => {
      const fusion = parseFusion(value);
      if (!fusion)
        ctx.addIssue({
          code: 'custom',
          message: 'RETRIEVAL_FUSION must be rrf, dbsf, dense, sparse, convex:<0–1> or dbsf:<0–1>',
        });
      return fusion ?? z.NEVER;
    }),
  /**
   * Put before a question when it is embedded, never before passages; unset: chosen by EMBEDDING_MODEL's name (the
   * BGE English models' instruction, else none); `none`: no prefix (src/retrieval/query-instruction.ts).
   */
  EMBEDDING_QUERY_PREFIX: z.preprocess(blankIsUnset, z.string().max(500).optional()),
  /** Where answers are scored (workers/scoring); unset: records stay unscored. */
  SCORING_WORKER_URL: optionalUrl,
  /** The static assets binding (wrangler.toml `[assets]`): the web app's page comes from it. */
  ASSETS: z
    .custom<{ fetch(input: URL): Promise<Response> }>(
      (value) => typeof (value as { fetch?: unknown } | undefined)?.fetch === 'function',
      'the assets binding ASSETS is missing',
    )
    .optional(),
  /** Supabase's publishable (anon) key, which the web app signs people in with; unset: no web app. */
  SUPABASE_ANON_KEY: z.preprocess(blankIsUnset, z.string().optional()),
  /**
   * Origins (scheme://host[:port]) whose pages may call the API from a browser, comma-separated.
   * Empty: only the app's own origin, which needs no CORS.
   */
  CORS_ORIGINS: z
    .string()
    .default('')
    .transform((value, ctx) => {
      const origins = value
        .split(',')
        .map((entry) => entry.trim())
        .filter(Boolean);
      const bad = origins.filter((entry) => !URL.canParse(entry) || new URL(entry).origin !== entry);
      if (bad.length > 0)
        ctx.addIssue({ code: 'custom', message: `CORS_ORIGINS: not an origin (scheme://host[:port]): ${bad.join(', ')}` });
      return origins;
    }),
  /**
   * The bearer token of GET /ready (a monitor's); unset: /ready is for administrators' tokens only. At least
   * 32 characters (`openssl rand -hex 32`).
   */
  READY_TOKEN: z.preprocess(blankIsUnset, z.string().trim().min(32, 'READY_TOKEN must be at least 32 characters').optional()),
  /** Upstash Redis, where the rate limits are counted; unset: no rate limits. */
  UPSTASH_REDIS_REST_URL: optionalUrl,
  UPSTASH_REDIS_REST_TOKEN: z.preprocess(blankIsUnset, z.string().optional()),
  /** Requests per minute per user, their bearer token and all their API keys together, on every endpoint. */
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(120),
  /** Questions per minute per user on POST /query/, which spends model tokens; on top of the general limit. */
  QUERY_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(20),
  /** Searches per minute per user on POST /query/search, which embeds the question; on top of the general limit. */
  SEARCH_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(60),
  /**
   * Tokens (in and out, every model role) per user per UTC day; past it, POST /query/ and POST /query/search
   * answer 429 token_cap_exceeded until 00:00 UTC. Unset: no cap.
   */
  DAILY_TOKENS_PER_USER: z.preprocess(blankIsUnset, z.coerce.number().int().positive().optional()),
  /**
   * USD per million tokens by model name, for GET /usage: {"gpt-4o-mini": {"input": 0.15, "output": 0.6}}.
   * Unset: usage is reported in tokens only.
   */
  MODEL_PRICES: z.preprocess(blankIsUnset, z.string().optional()).transform((value, ctx) => {
    if (value === undefined) return undefined;
    const parsed = ModelPrices.safeParse(parseJson(value));
    if (!parsed.success) {
      ctx.addIssue({
        code: 'custom',
        message: 'MODEL_PRICES must be JSON: {"<model>": {"input": <USD per million>, "output": <USD per million>}, …}',
      });
      return z.NEVER;
    }
    return parsed.data;
  }),
  /** `off`: model usage is not recorded (for measuring what recording costs); GET /usage then shows none. */
  USAGE_RECORDING: z.enum(['on', 'off'], 'USAGE_RECORDING must be on or off').default('on'),
  /** Refused credentials (invalid token or API key) per minute per client address; past it, 429. */
  AUTH_FAILURE_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(30),
  AUTH_JWKS_URL: z.url('AUTH_JWKS_URL must be the URL of the identity provider JWKS'),
  /** Every token must carry this `iss` (Supabase: <SUPABASE_URL>/auth/v1); a token from another issuer is 401. */
  AUTH_ISSUER: z.url('AUTH_ISSUER must be the identity provider issuer URL, the `iss` of its tokens'),
  /** Supabase's anonymous sign-ins (`is_anonymous` tokens) may use the API only when this is `true`. */
  AUTH_ALLOW_ANONYMOUS: z
    .enum(['true', 'false'], 'AUTH_ALLOW_ANONYMOUS must be true or false')
    .default('false')
    .transform((value) => value === 'true'),
  AUTH_CLOCK_TOLERANCE_SECONDS: z.coerce.number().int().min(0).max(300).default(5),
  /** Age after which the cached JWKS is refreshed in the background. */
  AUTH_JWKS_REFRESH_SECONDS: z.coerce.number().int().min(1).max(86_400).default(600),
  /** Age up to which cached keys still verify while refreshes fail; past it, 503. */
  AUTH_JWKS_MAX_STALE_SECONDS: z.coerce.number().int().min(1).max(604_800).default(86_400),
  /** At most one JWKS fetch per this many seconds; also how long a failed fetch is remembered. */
  AUTH_JWKS_COOLDOWN_SECONDS: z.coerce.number().int().min(1).max(3_600).default(30),
});
export type Config = z.infer<typeof ConfigSchema>;

export const loadConfig = (env: object): Config => parseSettings(ConfigSchema, env);
