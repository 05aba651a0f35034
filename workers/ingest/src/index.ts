import { z } from 'zod';
import { adaptersFor } from '#core/adapters/index.ts';
import { createPipelineDb } from '#core/db/ingest-pipeline.ts';
import { createQuotaRepo } from '#core/db/ingest-quota.ts';
import { createSweepsDb, type SweepsDb } from '#core/db/sweeps.ts';
import { createDeliveryRepo } from '#core/db/webhook-deliveries.ts';
import { MAX_DOCUMENT_BYTES } from '#core/limits.ts';
import { FAILURE_PATH, type IngestMessage, STEP_PATH } from '#core/messages/ingest.ts';
import { WEBHOOK_PATH, type WebhookMessage } from '#core/messages/webhooks.ts';
import { createQStashWorker, type QStashWorker, sweepOnSchedule } from '#core/qstash/worker-shell.ts';
import { createResolver } from '#core/urls/dns.ts';
import { guardedFetch } from '#core/urls/guarded-fetch.ts';
import { checkReceiverUrl } from '#core/urls/receiver-policy.ts';
import { type IngestConfig, loadIngestConfig } from './config.ts';
import type { PipelineDeps } from './pipeline/deps.ts';
import { recordFailedStep, runStep } from './steps.ts';
import { sweepStaleJobs, sweepUnfinishedDeletions, sweepUnqueuedDeliveries } from './sweep.ts';
import { type DeliveryDeps, deliverWebhook, giveUpDelivery } from './webhooks/deliver.ts';

const StepMessage = z.discriminatedUnion('step', [
  z.object({ job_id: z.uuid(), step: z.literal('extract'), from_page: z.number().int().min(1).optional() }),
  z.object({ job_id: z.uuid(), step: z.literal('embed'), from: z.number().int().min(0), to: z.number().int().min(1) }),
]) satisfies z.ZodType<IngestMessage>;
const DeliveryMessage = z.object({ delivery_id: z.uuid() }) satisfies z.ZodType<WebhookMessage>;

type IngestDeps = PipelineDeps & DeliveryDeps & { sweeps: SweepsDb; sweepAfterMinutes: number };

const worker: QStashWorker<IngestConfig, IngestDeps, IngestMessage | WebhookMessage> = {
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
      deliveries: createDeliveryRepo(sql),
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
      // Webhook receivers pass the same address rules again at every delivery, with their own trusted origins.
      checkUrl: (url) =>
        checkReceiverUrl(url, {
          resolve,
          origins: { webhook: config.WEBHOOK_TRUSTED_ORIGINS, ingest: config.INGEST_TRUSTED_ORIGINS },
        }),
    };
  },
  routes: {
    [STEP_PATH]: { message: StepMessage, refusal: 'Not an ingest message', handle: runStep },
    [WEBHOOK_PATH]: { message: DeliveryMessage, refusal: 'Not a webhook delivery message', handle: deliverWebhook },
  },
  failures: {
    path: FAILURE_PATH,
    message: z.union([StepMessage, DeliveryMessage]),
    refusal: 'Not a failure callback for an ingest or webhook message',
    handle: (deps, message, ending) =>
      'delivery_id' in message ? giveUpDelivery(deps, message) : recordFailedStep(deps, message, ending),
  },
  retryDetail: 'Step failed; it will be retried',
  logLabel: 'ingest step failed:',
};

const app = createQStashWorker(worker);

/**
 * QStash delivers the steps and the webhook deliveries; the cron picks up jobs whose messages were all
 * lost, deliveries never handed to the queue, and deletions left unfinished (sweep.ts).
 */
export default {
  fetch: app.fetch,
  scheduled: sweepOnSchedule(worker, async (deps) => ({
    ...(await sweepStaleJobs(deps, deps.sweepAfterMinutes)),
    ...(await sweepUnqueuedDeliveries(deps)),
    ...(await sweepUnfinishedDeletions(deps, deps.sweepAfterMinutes)),
  })),
};
