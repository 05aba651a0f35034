import { z } from 'zod';
import { adaptersFor } from '#core/adapters/index.ts';
import { createAuditRepo } from '#core/db/audit-log.ts';
import { createPipelineDb } from '#core/db/ingest-pipeline.ts';
import { createQuotaRepo } from '#core/db/ingest-quota.ts';
import { createJobRepo } from '#core/db/jobs.ts';
import { createSourceDocumentRepo } from '#core/db/source-documents.ts';
import { createPageRepo } from '#core/db/source-pages.ts';
import { createRunRepo } from '#core/db/source-runs.ts';
import { createSourceRepo } from '#core/db/sources.ts';
import { createSweepsDb, type SweepsDb } from '#core/db/sweeps.ts';
import { createUsageRepo } from '#core/db/usage.ts';
import { createDeliveryRepo } from '#core/db/webhook-deliveries.ts';
import { MAX_DOCUMENT_BYTES } from '#core/limits.ts';
import { CRAWL_PATH, type CrawlMessage } from '#core/messages/crawl.ts';
import { FAILURE_PATH, type IngestMessage, STEP_PATH } from '#core/messages/ingest.ts';
import { tracedQueue } from '#core/messages/request-id.ts';
import { WEBHOOK_PATH, type WebhookMessage } from '#core/messages/webhooks.ts';
import { createQStashWorker, type QStashWorker, sweepOnSchedule } from '#core/qstash/worker-shell.ts';
import { CRAWLER_USER_AGENT } from '#core/sources/limits.ts';
import { createResolver } from '#core/urls/dns.ts';
import { checkReceiverUrl } from '#core/urls/receiver-policy.ts';
import { type IngestConfig, loadIngestConfig } from './config.ts';
import type { CrawlDeps } from './crawl/deps.ts';
import { syncDueSources } from './crawl/schedule.ts';
import { recordFailedCrawl, runCrawlStep } from './crawl/step.ts';
import { guardedFetch } from './guarded-fetch.ts';
import type { PipelineDeps } from './pipeline/deps.ts';
import { recordFailedStep, runStep } from './steps.ts';
import {
  type AuditSweepDeps,
  sweepAuditLog,
  sweepStaleJobs,
  sweepUnfinishedDeletions,
  sweepUnqueuedDeliveries,
} from './sweep.ts';
import { type DeliveryDeps, deliverWebhook, giveUpDelivery } from './webhooks/deliver.ts';

const StepMessage = z.discriminatedUnion('step', [
  z.object({ job_id: z.uuid(), step: z.literal('extract'), from_page: z.number().int().min(1).optional() }),
  z.object({ job_id: z.uuid(), step: z.literal('embed'), from: z.number().int().min(0), to: z.number().int().min(1) }),
]) satisfies z.ZodType<IngestMessage>;
const DeliveryMessage = z.object({ delivery_id: z.uuid() }) satisfies z.ZodType<WebhookMessage>;
const CrawlStepMessage = z.object({ run_id: z.uuid(), step: z.number().int().min(1) }) satisfies z.ZodType<CrawlMessage>;

type IngestDeps = PipelineDeps & CrawlDeps & DeliveryDeps & AuditSweepDeps & { sweeps: SweepsDb; sweepAfterMinutes: number };

const worker: QStashWorker<IngestConfig, IngestDeps, IngestMessage | WebhookMessage | CrawlMessage, Env> = {
  loadConfig: loadIngestConfig,
  signing: (config) => ({
    workerUrl: config.INGEST_WORKER_URL,
    currentSigningKey: config.QSTASH_CURRENT_SIGNING_KEY,
    nextSigningKey: config.QSTASH_NEXT_SIGNING_KEY,
  }),
  deps: (config, sql, log) => {
    const resolve = createResolver(config.DNS_OVER_HTTPS_URL);
    const adapters = adaptersFor(config);
    return {
      ...adapters,
      // Every message a delivery queues carries its request id on.
      queue: tracedQueue(adapters.queue, log.requestId),
      log,
      db: createPipelineDb(sql),
      deliveries: createDeliveryRepo(sql),
      sweeps: createSweepsDb(sql),
      sweepAfterMinutes: config.INGEST_SWEEP_AFTER_MINUTES,
      auditLog: createAuditRepo(sql),
      auditRetentionDays: config.AUDIT_RETENTION_DAYS,
      quota: { ...createQuotaRepo(sql), perDay: config.INGEST_DAILY_CHUNKS_PER_USER },
      usage: createUsageRepo(sql),
      workerUrl: config.INGEST_WORKER_URL,
      batchSize: config.INGEST_BATCH_SIZE,
      budget: {
        maxChars: config.INGEST_MAX_DOCUMENT_CHARS,
        maxChunks: config.INGEST_MAX_DOCUMENT_CHUNKS,
        maxPages: config.INGEST_MAX_PDF_PAGES,
      },
      fetchUrl: (url) =>
        guardedFetch(url, { resolve, trustedOrigins: config.INGEST_TRUSTED_ORIGINS, maxBytes: MAX_DOCUMENT_BYTES }),
      // A crawl fetches under the same address rules, as the crawler robots.txt names.
      fetchPage: (url, options) =>
        guardedFetch(url, {
          resolve,
          trustedOrigins: config.INGEST_TRUSTED_ORIGINS,
          maxBytes: MAX_DOCUMENT_BYTES,
          userAgent: CRAWLER_USER_AGENT,
          ...options,
        }),
      sources: createSourceRepo(sql),
      runs: createRunRepo(sql),
      pages: createPageRepo(sql),
      sourceDocuments: createSourceDocumentRepo(sql),
      jobs: createJobRepo(sql),
      usedToday: createQuotaRepo(sql).usedToday,
      politeness: {
        delayMs: config.CRAWL_HOST_DELAY_MS,
        concurrency: config.CRAWL_HOST_CONCURRENCY,
        trustedOrigins: config.INGEST_TRUSTED_ORIGINS,
      },
      pagesPerStep: config.CRAWL_PAGES_PER_STEP,
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
    [CRAWL_PATH]: { message: CrawlStepMessage, refusal: 'Not a crawl step message', handle: runCrawlStep },
  },
  failures: {
    path: FAILURE_PATH,
    message: z.union([StepMessage, DeliveryMessage, CrawlStepMessage]),
    refusal: 'Not a failure callback for an ingest, webhook or crawl message',
    handle: (deps, message, ending) =>
      'delivery_id' in message
        ? giveUpDelivery(deps, message)
        : 'run_id' in message
          ? recordFailedCrawl(deps, message, ending)
          : recordFailedStep(deps, message, ending),
  },
  retryDetail: 'Step failed; it will be retried',
  name: 'ingest',
};

const app = createQStashWorker(worker);

/**
 * QStash delivers the steps, the webhook deliveries and the crawl steps of sources' syncs; the cron picks up
 * jobs whose messages were all lost, deliveries never handed to the queue, deletions left unfinished
 * (sweep.ts), and starts the scheduled syncs that are due (crawl/schedule.ts); it removes audit log entries past
 * their retention (AUDIT_RETENTION_DAYS).
 */
export default {
  fetch: app.fetch,
  scheduled: sweepOnSchedule(worker, async (deps) => ({
    ...(await sweepStaleJobs(deps, deps.sweepAfterMinutes)),
    ...(await sweepUnqueuedDeliveries(deps)),
    ...(await sweepUnfinishedDeletions(deps, deps.sweepAfterMinutes)),
    ...(await syncDueSources(deps)),
    ...(await sweepAuditLog(deps)),
  })),
} satisfies ExportedHandler<Env>;
