import { Hono } from 'hono';
import { z } from 'zod';
import { createModels } from '#core/adapters/models.ts';
import { createQueue } from '#core/adapters/queue.ts';
import { createObjectStore } from '#core/adapters/storage.ts';
import { createVectorStore } from '#core/adapters/vectors.ts';
import { connect } from '#core/db/client.ts';
import { createPipelineDb } from '#core/db/ingest-pipeline.ts';
import { AppError } from '#core/errors.ts';
import { FAILURE_PATH, type IngestMessage, STEP_PATH, STEP_RETRIES } from '#core/messages/ingest.ts';
import { decodeSourceBody, parseMessage, verifyDeliveries } from '#core/qstash/worker-shell.ts';
import { createResolver } from '#core/urls/dns.ts';
import { guardedFetch } from '#core/urls/guarded-fetch.ts';
import { type IngestConfig, loadIngestConfig } from './config.ts';
import type { PipelineDeps } from './pipeline/deps.ts';
import { MAX_SOURCE_BYTES } from './pipeline/source.ts';
import { recordFailedStep, runStep } from './steps.ts';

const Message = z.discriminatedUnion('step', [
  z.object({ job_id: z.uuid(), step: z.literal('extract'), from_page: z.number().int().min(1).optional() }),
  z.object({ job_id: z.uuid(), step: z.literal('embed'), from: z.number().int().min(0), to: z.number().int().min(1) }),
]) satisfies z.ZodType<IngestMessage>;

/** QStash's failure callback carries the original message base64-encoded. */
const FailureCallback = z.object({ sourceBody: z.string() });

type WorkerEnv = { Bindings: Record<string, unknown>; Variables: { config: IngestConfig; body: string } };

const app = new Hono<WorkerEnv>();

app.get('/health', (c) => c.json({ ok: true }));

app.use(
  '*',
  verifyDeliveries<WorkerEnv>(
    (env) => {
      const config = loadIngestConfig(env);
      return {
        workerUrl: config.INGEST_WORKER_URL,
        currentSigningKey: config.QSTASH_CURRENT_SIGNING_KEY,
        nextSigningKey: config.QSTASH_NEXT_SIGNING_KEY,
      };
    },
    (c) => c.set('config', loadIngestConfig(c.env)),
  ),
);

app.post(STEP_PATH, async (c) => {
  const message = parseMessage(Message, c.var.body);
  if (!message) return c.json({ detail: 'Not an ingest message' }, 400);
  const config = c.var.config;
  const retried = Number(c.req.header('upstash-retried') ?? 0);
  await withDeps(config, c.executionCtx, (deps) => runStep(deps, message, { retried, final: retried >= STEP_RETRIES }));
  return c.json({ ok: true });
});

app.post(FAILURE_PATH, async (c) => {
  const callback = parseMessage(FailureCallback, c.var.body);
  const message = callback && parseMessage(Message, decodeSourceBody(callback.sourceBody));
  if (!message) return c.json({ detail: 'Not a failure callback for an ingest message' }, 400);
  await withDeps(c.var.config, c.executionCtx, (deps) => recordFailedStep(deps, message));
  return c.json({ ok: true });
});

app.onError((error, c) => {
  // A non-2xx makes QStash retry; the details stay in the log.
  console.error('ingest step failed:', error);
  if (error instanceof AppError && error.code === 'misconfigured') return c.json({ detail: error.detail }, 500);
  return c.json({ detail: 'Step failed; it will be retried' }, 500);
});

async function withDeps<T>(
  config: IngestConfig,
  ctx: { waitUntil(promise: Promise<unknown>): void },
  run: (deps: PipelineDeps) => Promise<T>,
): Promise<T> {
  const sql = connect(config.HYPERDRIVE.connectionString);
  const resolve = createResolver(config.DNS_OVER_HTTPS_URL);
  try {
    return await run({
      db: createPipelineDb(sql),
      store: createObjectStore({
        url: config.SUPABASE_URL,
        serviceRoleKey: config.SUPABASE_SERVICE_ROLE_KEY,
        bucket: config.STORAGE_BUCKET,
      }),
      vectors: createVectorStore({ url: config.UPSTASH_VECTOR_REST_URL, token: config.UPSTASH_VECTOR_REST_TOKEN }),
      models: createModels({
        baseUrl: config.OPENAI_BASE_URL,
        apiKey: config.OPENAI_API_KEY,
        embeddingModel: config.EMBEDDING_MODEL,
        embeddingDimensions: config.EMBEDDING_DIMENSIONS,
        visionModel: config.VISION_MODEL,
      }),
      queue: createQueue({ url: config.QSTASH_URL, token: config.QSTASH_TOKEN }),
      workerUrl: config.INGEST_WORKER_URL,
      batchSize: config.INGEST_BATCH_SIZE,
      fetchUrl: (url) =>
        guardedFetch(url, { resolve, trustedOrigins: config.INGEST_TRUSTED_ORIGINS, maxBytes: MAX_SOURCE_BYTES }),
    });
  } finally {
    ctx.waitUntil(sql.end({ timeout: 5 }));
  }
}

export default app;
