import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../ports.ts';
import { type Devstack, type DevstackOptions, startDevstack } from '../stack.ts';
import { roleVars, type UserRoles } from './roles.ts';
import { type RunningWorker, startWorker } from './worker.ts';

export type WorkerName = 'api' | 'ingest' | 'scoring';

/** What sits between some workers and the devstack (a bench's timing proxies), and how to stop it. */
export interface Interposed {
  /** Settings that replace a worker's own. */
  vars?: Partial<Record<WorkerName, Record<string, string>>>;
  /** The database a worker connects to instead of the devstack's. */
  databaseUrls?: Partial<Record<WorkerName, string>>;
  stop?: () => Promise<void>;
}

export interface LocalDeploymentOptions {
  /** Kept between runs (`npm run dev`). Without one: a temporary directory and an in-memory database, gone after stop(). */
  dataDir?: string;
  /** The devstack's own options; its ports, like the workers', are free ones when unset. */
  devstack?: Omit<DevstackOptions, 'dataDir' | 'ephemeral'>;
  ports?: Partial<Record<WorkerName, number>>;
  /** wrangler's local state, a directory per worker: two workerd processes on one SQLite file collide (SQLITE_BUSY). */
  stateDir?: string;
  /** Without the scoring worker, answers are recorded but never scored. */
  scoring?: boolean;
  /** Added to every worker's settings (INGEST_TRUSTED_ORIGINS for the test pages, WEBHOOK_TRUSTED_ORIGINS for the test receiver). */
  vars?: Record<string, string>;
  /** Model roles the user points at a provider of their own; the devstack serves the rest. */
  roles?: UserRoles;
  /**
   * The user's own settings for each worker (`npm run dev`: the shell and .dev.vars, split by what each
   * worker reads; devstack/local/user-settings.ts). They win over the devstack's wiring and the roles.
   */
  settings?: Partial<Record<WorkerName, Record<string, string>>>;
  /** Runs once the devstack is up, before any worker starts. */
  beforeWorkers?: (stack: Devstack) => Promise<Interposed>;
  /** Keep wrangler's output for error reports (tests, benches) instead of passing it through. */
  quiet?: boolean;
  /** With quiet, also write a worker's output here; unset, `<dataDir>/<worker>.log`. */
  logFiles?: Partial<Record<WorkerName, string | undefined>>;
}

export interface LocalDeployment {
  dataDir: string;
  stack: Devstack;
  api: RunningWorker;
  ingest: RunningWorker;
  scoring: RunningWorker | null;
  /** The API worker's settings, for starting another copy with some changed. */
  apiVars: Record<string, string>;
  /** Every worker's settings, as each was started with. */
  vars: Record<WorkerName, Record<string, string>>;
  /** Where a quiet deployment writes each worker's output (its structured log lines among wrangler's own). */
  logFiles: Partial<Record<WorkerName, string>>;
  stop(): Promise<void>;
}

/**
 * Rate limits out of reach, for runs that send hundreds of requests a minute as one user (the test
 * suites, the benchmarks); test/api/rate-limits.test.ts checks the real ones.
 */
export const UNLIMITED_RATES = {
  RATE_LIMIT_PER_MINUTE: '1000000',
  QUERY_RATE_LIMIT_PER_MINUTE: '1000000',
  SEARCH_RATE_LIMIT_PER_MINUTE: '1000000',
  // Every test sends from loopback, one address, and many send bad credentials on purpose.
  AUTH_FAILURE_RATE_LIMIT_PER_MINUTE: '1000000',
};

/** QStash retries in a second or two rather than minutes, for runs that wait on them. */
export const fastRetries = (retry: number) => 150 * 2 ** retry;

/** The devstack and, under `wrangler dev`, the API, ingest and scoring workers wired to it. */
export async function startLocalDeployment(options: LocalDeploymentOptions = {}): Promise<LocalDeployment> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'rag-deployment-')));
  const cleanups: (() => Promise<unknown>)[] = [];
  if (!options.dataDir) cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const stop = async () => {
    for (const step of cleanups.splice(0)) await step().catch(() => {});
  };
  try {
    const stack = await startDevstack({
      ...options.devstack,
      externalEmbeddingDimension: options.roles?.EMBEDDING?.dimensions,
      externalEmbeddingModel: options.roles?.EMBEDDING?.model,
      dataDir,
      ephemeral: !options.dataDir,
      apiPort: options.devstack?.apiPort ?? (await freePort()),
      postgresPort: options.devstack?.postgresPort ?? (await freePort()),
    });
    cleanups.unshift(() => stack.stop());
    const interposed = (await options.beforeWorkers?.(stack)) ?? {};
    if (interposed.stop) cleanups.unshift(interposed.stop);

    const port = async (name: WorkerName) => options.ports?.[name] ?? (await freePort());
    const ports = { api: await port('api'), ingest: await port('ingest'), scoring: await port('scoring') };
    const ingestUrl = `http://127.0.0.1:${ports.ingest}`;
    const scoringUrl = options.scoring === false ? undefined : `http://127.0.0.1:${ports.scoring}`;
    const own = {
      api: apiWorkerVars(stack, ingestUrl, scoringUrl),
      ingest: ingestWorkerVars(stack, ingestUrl),
      scoring: scoringUrl ? scoringWorkerVars(stack, ingestUrl, scoringUrl) : {},
    };
    const vars = (name: WorkerName) => ({
      ...own[name],
      ...roleVars(options.roles ?? {}),
      ...options.settings?.[name],
      ...options.vars,
      ...interposed.vars?.[name],
    });
    const stateDir = options.stateDir ?? join(dataDir, 'wrangler');
    // A quiet deployment (tests, benches) keeps every worker's output in a file, so that a test can read its logs.
    const logFiles: Partial<Record<WorkerName, string>> = {};
    for (const name of ['api', 'ingest', 'scoring'] as const) {
      const file = options.logFiles?.[name] ?? (options.quiet ? join(dataDir, `${name}.log`) : undefined);
      if (file) logFiles[name] = file;
    }
    // A failed start is kept rather than thrown, so that no worker still starting outlives stop().
    let failure: unknown;
    const start = (name: WorkerName, config: string) =>
      startWorker({
        config,
        port: ports[name],
        vars: vars(name),
        hyperdrive: { HYPERDRIVE: interposed.databaseUrls?.[name] ?? stack.workerDatabaseUrls[name] },
        persistTo: join(stateDir, name),
        quiet: options.quiet,
        logFile: logFiles[name],
      }).then(
        (worker) => {
          cleanups.unshift(() => worker.stop());
          return worker;
        },
        (error: unknown) => {
          failure ??= error;
          return null;
        },
      );
    const [ingest, scoring, api] = await Promise.all([
      start('ingest', 'workers/ingest/wrangler.toml'),
      scoringUrl ? start('scoring', 'workers/scoring/wrangler.toml') : null,
      start('api', 'wrangler.toml'),
    ]);
    if (!ingest || !api || (scoringUrl && !scoring)) throw failure;
    const started = { api: vars('api'), ingest: vars('ingest'), scoring: scoring ? vars('scoring') : {} };
    return { dataDir, stack, api, ingest, scoring, apiVars: started.api, vars: started, logFiles, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Settings every worker needs to talk to this devstack. */
function sharedVars(stack: Devstack, ingestUrl: string): Record<string, string> {
  return {
    SUPABASE_URL: stack.supabaseUrl,
    SUPABASE_SERVICE_ROLE_KEY: stack.keys.serviceRoleKey,
    STORAGE_BUCKET: stack.storageBucket,
    QSTASH_URL: stack.qstashUrl,
    QSTASH_TOKEN: stack.keys.services.qstashToken,
    UPSTASH_VECTOR_REST_URL: stack.vectorUrl,
    UPSTASH_VECTOR_REST_TOKEN: stack.keys.services.vectorToken,
    INGEST_WORKER_URL: ingestUrl,
    DNS_OVER_HTTPS_URL: stack.dohUrl,
    OPENAI_BASE_URL: stack.openaiBaseUrl,
    OPENAI_API_KEY: stack.keys.services.modelApiKey,
    ...(stack.embeddings ? { EMBEDDING_MODEL: stack.embeddings.model } : {}),
  };
}

function apiWorkerVars(stack: Devstack, ingestUrl: string, scoringUrl?: string): Record<string, string> {
  return {
    ...sharedVars(stack, ingestUrl),
    // Without a scoring worker, evaluation records stay unscored.
    ...(scoringUrl ? { SCORING_WORKER_URL: scoringUrl } : {}),
    AUTH_JWKS_URL: stack.jwksUrl,
    AUTH_ISSUER: stack.issuer,
    SUPABASE_ANON_KEY: stack.keys.anonKey,
    CHAT_MODEL: stack.textModel,
    // Served on the shared OpenAI-compatible mount (OPENAI_BASE_URL), in Cohere's rerank shape.
    ...(stack.rerankModel ? { RERANK_MODEL: stack.rerankModel } : {}),
    // Rate limiting is the API's alone; without Redis it is off.
    ...(stack.redisUrl ? { UPSTASH_REDIS_REST_URL: stack.redisUrl, UPSTASH_REDIS_REST_TOKEN: stack.redisToken } : {}),
  };
}

/** Without JUDGE_MODEL the scoring worker uses the lexical scorer. */
function scoringWorkerVars(stack: Devstack, ingestUrl: string, scoringUrl: string): Record<string, string> {
  return {
    ...sharedVars(stack, ingestUrl),
    SCORING_WORKER_URL: scoringUrl,
    QSTASH_CURRENT_SIGNING_KEY: stack.keys.services.qstashCurrentSigningKey,
    QSTASH_NEXT_SIGNING_KEY: stack.keys.services.qstashNextSigningKey,
  };
}

/** With no embedding model the ingest worker writes sparse vectors only. */
function ingestWorkerVars(stack: Devstack, ingestUrl: string): Record<string, string> {
  return {
    ...sharedVars(stack, ingestUrl),
    QSTASH_CURRENT_SIGNING_KEY: stack.keys.services.qstashCurrentSigningKey,
    QSTASH_NEXT_SIGNING_KEY: stack.keys.services.qstashNextSigningKey,
    VISION_MODEL: stack.visionModel,
  };
}
