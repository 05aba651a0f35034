import { z } from 'zod';
import { adaptersFor } from '#core/adapters/index.ts';
import { createPipelineDb } from '#core/db/ingest-pipeline.ts';
import { createQuotaRepo } from '#core/db/ingest-quota.ts';
import { createSweepsDb, type SweepsDb } from '#core/db/sweeps.ts';
import { MAX_DOCUMENT_BYTES } from '#core/limits.ts';
import { FAILURE_PATH, type IngestMessage, STEP_PATH, STEP_RETRIES } from '#core/messages/ingest.ts';
import { createQStashWorker, type QStashWorker, sweepOnSchedule } from '#core/qstash/worker-shell.ts';
import { createResolver } from '#core/urls/dns.ts';
import { guardedFetch } from '#core/urls/guarded-fetch.ts';
import { type IngestConfig, loadIngestConfig } from './config.ts';
import type { PipelineDeps } from './pipeline/deps.ts';
import { recordFailedStep, runStep } from './steps.ts';
import { sweepStaleJobs } from './sweep.ts';

const Message = z.discriminatedUnion('step', [
  z.object({ job_id: z.uuid(), step: z.literal('extract'), from_page: z.number().int().min(1).optional() }),
  z.object({ job_id: z.uuid(), step: z.literal('embed'), from: z.number().int().min(0), to: z.number().int().min(1) }),
]) satisfies z.ZodType<IngestMessage>;

type IngestDeps = PipelineDeps & { sweeps: SweepsDb; sweepAfterMinutes: number };

const worker: QStashWorker<IngestConfig, IngestDeps, IngestMessage> = {
  loadConfig: loadIngestConfig,
  signing: (config) => ({
    workerUrl: config.INGEST_WORKER_URL,
    currentSigningKey: config.QSTASH_CURRENT_SIGNING_KEY,
    nextSigningKey: config.QSTASH_NEXT_SIGNING_KEY,
  }),
  deps: (config, sql) => {
    const resolve = createResolver(config.DNS_OVER_HTTPS_URL);
    return {
      ...adaptersFor(config),
      db: createPipelineDb(sql),
      sweeps: createSweepsDb(sql),
      sweepAfterMinutes: config.INGEST_SWEEP_AFTER_MINUTES,
      quota: { ...createQuotaRepo(sql), perDay: config.INGEST_DAILY_CHUNKS_PER_USER },
      workerUrl: config.INGEST_WORKER_URL,
      batchSize: config.INGEST_BATCH_SIZE,
      budget: {
        maxChars: config.INGEST_MAX_DOCUMENT_CHARS,
        maxChunks: config.INGEST_MAX_DOCUMENT_CHUNKS,
        maxPages: config.INGEST_MAX_PDF_PAGES,
      },
      fetchUrl: (url) =>
        guardedFetch(url, { resolve, trustedOrigins: config.INGEST_TRUSTED_ORIGINS, maxBytes: MAX_DOCUMENT_BYTES }),
    };
  },
  routes: {
    [STEP_PATH]: { message: Message, refusal: 'Not an ingest message', retries: STEP_RETRIES, handle: runStep },
  },
  failures: {
    path: FAILURE_PATH,
    message: Message,
    refusal: 'Not a failure callback for an ingest message',
    handle: (deps, message) => recordFailedStep(deps, message),
  },
  retryDetail: 'Step failed; it will be retried',
  logLabel: 'ingest step failed:',
};

const app = createQStashWorker(worker);

/** QStash delivers the steps; the cron picks up jobs whose messages were all lost (sweep.ts). */
export default {
  fetch: app.fetch,
  scheduled: sweepOnSchedule(worker, (deps) => sweepStaleJobs(deps, deps.sweepAfterMinutes)),
};
