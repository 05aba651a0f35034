import { z } from 'zod';
import { blankIsUnset, parseSettings, roleEndpoint, SharedSettings } from '#core/config.ts';

/**
 * Every setting the scoring worker reads; .dev.vars.example documents each one. Of the shared
 * settings it takes the database, the model endpoint and the queue (its cron sweep queues answers
 * whose scoring was lost); it touches no storage or vectors.
 */
export const ScoringSettings = z.object({
  HYPERDRIVE: SharedSettings.HYPERDRIVE,
  OPENAI_BASE_URL: SharedSettings.OPENAI_BASE_URL,
  OPENAI_API_KEY: SharedSettings.OPENAI_API_KEY,
  ...roleEndpoint('EMBEDDING'),
  ...roleEndpoint('JUDGE'),
  EMBEDDING_MODEL: SharedSettings.EMBEDDING_MODEL,
  EMBEDDING_DIMENSIONS: SharedSettings.EMBEDDING_DIMENSIONS,
  SCORING_WORKER_URL: z.url('SCORING_WORKER_URL must be this worker’s public URL, which QStash signs'),
  QSTASH_CURRENT_SIGNING_KEY: z.string().min(1, 'QSTASH_CURRENT_SIGNING_KEY is required'),
  QSTASH_NEXT_SIGNING_KEY: z.string().min(1, 'QSTASH_NEXT_SIGNING_KEY is required'),
  QSTASH_URL: SharedSettings.QSTASH_URL,
  /** Without it the cron sweep cannot queue lost answers again; it only records them as failed. */
  QSTASH_TOKEN: z.preprocess(blankIsUnset, z.string().optional()),
  /** An answer unscored this long is queued again by the cron sweep (sweep.ts), then twice as long, … */
  SCORING_SWEEP_AFTER_MINUTES: z.coerce.number().int().positive().default(30),
  /** A chat model that judges answers (RAGAS-style); unset: the lexical scorer, with embeddings when EMBEDDING_MODEL is set. */
  JUDGE_MODEL: z.preprocess(blankIsUnset, z.string().optional()),
});

export type ScoringConfig = z.infer<typeof ScoringSettings>;

export const loadScoringConfig = (env: object): ScoringConfig => parseSettings(ScoringSettings, env);
