/**
 * The whole local stack the benchmarks run against, a local deployment like the tests' (devstack in
 * this process, the API and ingest workers under `wrangler dev`), and a client that talks to it over
 * HTTP like any user: sign up, create a collection, upload, poll the job.
 */

import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { callApi, fileForm, type Schema } from '../../devstack/harness/api-call.ts';
import { signUpUser } from '../../devstack/harness/auth-client.ts';
import {
  fastRetries,
  type LocalDeploymentOptions,
  startLocalDeployment,
  UNLIMITED_RATES,
} from '../../devstack/local/deployment.ts';
import { startWorker } from '../../devstack/local/worker.ts';
import { freePort } from '../../devstack/ports.ts';

export interface BenchStack {
  apiUrl: string;
  supabaseUrl: string;
  anonKey: string;
  /** For the Auth admin API. */
  serviceRoleKey: string;
  /** The wrangler processes of the API and ingest workers; their workerd children run the invocations. */
  apiWranglerPid: number;
  ingestWranglerPid: number;
  embeddings: string;
  /** Another API worker on the same devstack and database, with some settings changed. */
  startApi(vars: Record<string, string>): Promise<{ url: string; stop(): Promise<void> }>;
  stop(): Promise<void>;
}

/**
 * No scoring worker: answers are recorded but not scored, so scoring does not compete for the cores.
 * `options` puts something between the workers and the devstack, or uses another database.
 */
export async function startBenchStack(
  options: Pick<LocalDeploymentOptions, 'beforeWorkers'> & { databaseUrl?: string; vars?: Record<string, string> } = {},
): Promise<BenchStack> {
  const deployment = await startLocalDeployment({
    devstack: { databaseUrl: options.databaseUrl, qstashBackoffMs: fastRetries },
    scoring: false,
    vars: { ...UNLIMITED_RATES, ...options.vars },
    beforeWorkers: options.beforeWorkers,
    quiet: true,
    logFiles: { api: process.env.BENCH_API_LOG, ingest: process.env.BENCH_INGEST_LOG },
  });
  const { stack } = deployment;
  return {
    apiUrl: deployment.api.url,
    supabaseUrl: stack.supabaseUrl,
    anonKey: stack.keys.anonKey,
    serviceRoleKey: stack.keys.serviceRoleKey,
    apiWranglerPid: deployment.api.process.pid as number,
    ingestWranglerPid: deployment.ingest.process.pid as number,
    embeddings: stack.embeddings ? `${stack.embeddings.model} (${stack.embeddings.dimension} d)` : 'none (sparse vectors only)',
    startApi: async (vars) =>
      startWorker({
        config: 'wrangler.toml',
        port: await freePort(),
        vars: { ...deployment.apiVars, ...vars },
        hyperdrive: { HYPERDRIVE: stack.databaseUrl },
        persistTo: join(deployment.dataDir, 'wrangler', `api-${crypto.randomUUID().slice(0, 8)}`),
        quiet: true,
      }),
    stop: deployment.stop,
  };
}

export async function signUp(stack: BenchStack): Promise<string> {
  return (await signUpUser(stack, `bench-${crypto.randomUUID().slice(0, 8)}@example.com`)).token;
}

export async function createCollection(stack: Pick<BenchStack, 'apiUrl'>, token: string, name: string): Promise<string> {
  const { status, body } = await callApi(stack.apiUrl, 'POST', '/collections/', { token, body: { name } });
  if (status !== 200 || !body.id) throw new Error(`creating a collection failed: ${status} ${JSON.stringify(body)}`);
  return body.id;
}

export type Job = Schema<'IngestJob'>;

export const TERMINAL = new Set(['succeeded', 'partial', 'failed']);

async function upload(stack: BenchStack, token: string, collectionId: string, name: string, bytes: Uint8Array) {
  const form = fileForm(name, bytes);
  const { status, body } = await callApi(stack.apiUrl, 'POST', `/ingest/?collection_id=${collectionId}`, { token, body: form });
  if (status !== 200 || !body.job_id) throw new Error(`upload of ${name} failed: ${status} ${JSON.stringify(body)}`);
  return body.job_id;
}

async function job(stack: BenchStack, token: string, jobId: string): Promise<Job> {
  const { status, body } = await callApi(stack.apiUrl, 'GET', `/ingest/jobs/${jobId}`, { token });
  if (status !== 200) throw new Error(`GET /ingest/jobs/${jobId}: ${status} ${JSON.stringify(body)}`);
  return body;
}

export interface IngestedFile {
  name: string;
  bytes: number;
  job: Job;
  /** From the start of its upload to the poll that saw it terminal. */
  ms: number;
}

export interface IngestRun {
  /** From the first upload's start to the poll that saw the last job terminal. */
  wallMs: number;
  files: IngestedFile[];
}

/** Uploads the files one after another, then polls every job until all are terminal. */
export async function ingestAll(
  stack: BenchStack,
  token: string,
  collectionId: string,
  files: { name: string; bytes: Uint8Array }[],
  options: { pollMs?: number; timeoutMs?: number; onPoll?: (name: string, job: Job) => void } = {},
): Promise<IngestRun> {
  const pollMs = options.pollMs ?? 100;
  const start = performance.now();
  const deadline = Date.now() + (options.timeoutMs ?? 600_000);
  const pending = new Map<string, { name: string; bytes: number; started: number }>();
  for (const file of files) {
    const started = performance.now();
    pending.set(await upload(stack, token, collectionId, file.name, file.bytes), {
      name: file.name,
      bytes: file.bytes.byteLength,
      started,
    });
  }
  const done: IngestedFile[] = [];
  while (pending.size > 0) {
    if (Date.now() > deadline) throw new Error(`jobs did not finish in time: ${[...pending.values()].map((p) => p.name)}`);
    for (const [id, file] of [...pending]) {
      const state = await job(stack, token, id);
      options.onPoll?.(file.name, state);
      if (!TERMINAL.has(state.status)) continue;
      done.push({ name: file.name, bytes: file.bytes, job: state, ms: performance.now() - file.started });
      pending.delete(id);
    }
    if (pending.size > 0) await sleep(pollMs);
  }
  return { wallMs: performance.now() - start, files: done };
}
