import { z } from 'zod';
import { blankIsUnset, parseSettings, roleEndpoint, SharedSettings } from '#core/config.ts';

/**
 * Every setting the scoring worker reads; .dev.vars.example documents each one. Of the shared
 * settings it takes only the database and the model endpoint: it touches no storage, vectors or queue.
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
  /** A chat model that judges answers (RAGAS-style); unset: the lexical scorer, with embeddings when EMBEDDING_MODEL is set. */
  JUDGE_MODEL: z.preprocess(blankIsUnset, z.string().optional()),
});

export type ScoringConfig = z.infer<typeof ScoringSettings>;

export const loadScoringConfig = (env: object): ScoringConfig => parseSettings(ScoringSettings, env);
