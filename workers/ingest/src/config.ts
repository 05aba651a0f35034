import { z } from 'zod';
import { parseSettings, roleEndpoint, SharedSettings } from '#core/config.ts';
import { MAX_DOCUMENT_CHARS, MAX_DOCUMENT_CHUNKS, MAX_PDF_PAGES } from '#core/limits.ts';

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/** Every setting the ingest worker reads; .dev.vars.example documents each one. */
export const IngestSettings = z.object({
  ...SharedSettings,
  INGEST_WORKER_URL: z.url('INGEST_WORKER_URL must be this worker’s public URL, which QStash signs'),
  QSTASH_TOKEN: z.string().min(1, 'QSTASH_TOKEN is required'),
  QSTASH_CURRENT_SIGNING_KEY: z.string().min(1, 'QSTASH_CURRENT_SIGNING_KEY is required'),
  QSTASH_NEXT_SIGNING_KEY: z.string().min(1, 'QSTASH_NEXT_SIGNING_KEY is required'),
  VISION_MODEL: z.string().min(1).default('gpt-4o-mini'),
  ...roleEndpoint('VISION'),
  /** Text chunks embedded and upserted per QStash message. */
  INGEST_BATCH_SIZE: positiveInt(32),
  /** What one document may yield (src/core/limits.ts says why); past either, it ends `partial`. */
  INGEST_MAX_DOCUMENT_CHARS: positiveInt(MAX_DOCUMENT_CHARS),
  INGEST_MAX_DOCUMENT_CHUNKS: positiveInt(MAX_DOCUMENT_CHUNKS),
  /** A job untouched this long is picked up again by the cron sweep (sweep.ts); beyond QStash's last retry. */
  INGEST_SWEEP_AFTER_MINUTES: positiveInt(60),
  /** Audit log entries older than this many days are removed by the cron sweep (sweep.ts). */
  AUDIT_RETENTION_DAYS: positiveInt(365),
  /** Pages of a PDF read at most; a warning names the rest. */
  INGEST_MAX_PDF_PAGES: positiveInt(MAX_PDF_PAGES),
  /**
   * A crawl's politeness (crawl/polite.ts): the least time between two fetches from one site, except the
   * INGEST_TRUSTED_ORIGINS (its robots.txt Crawl-delay, or its last answer's time, if longer)…
   */
  CRAWL_HOST_DELAY_MS: z.coerce.number().int().min(0).default(250),
  /** …and the most fetches from one host at once. */
  CRAWL_HOST_CONCURRENCY: positiveInt(2),
  /** Pages one crawl step (one QStash message) fetches. */
  CRAWL_PAGES_PER_STEP: positiveInt(20),
});

export type IngestConfig = z.infer<typeof IngestSettings>;

export const loadIngestConfig = (env: object): IngestConfig => parseSettings(IngestSettings, env);
