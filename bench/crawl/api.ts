/** What bench/crawl/crawl.ts asks of the API under test: collections, ingest jobs, documents and a source's runs. */
import { setTimeout as sleep } from 'node:timers/promises';
import { callApi, type Schema } from '../../devstack/harness/api-call.ts';
import type { ModelProxy } from '../harness/timing-proxies.ts';
import { type Run, type Source, TIMEOUT_MS } from './settings.ts';

export interface Stack {
  apiUrl: string;
  token: string;
  pollMs: number;
  proxy: ModelProxy;
  /** The ingest worker's output, where wrangler writes a line with the time of each request. */
  ingestLog: string;
  delayMs: number;
}

export async function call<M extends 'GET' | 'POST', P extends string>(
  stack: Stack,
  method: M,
  path: P,
  body?: unknown,
  status = 200,
) {
  const response = await callApi(stack.apiUrl, method, path, { token: stack.token, body });
  if (response.status !== status) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

export async function createCollection(stack: Stack, name: string): Promise<string> {
  return (await call(stack, 'POST', '/collections/', { name })).id;
}

async function busyJobs(stack: Stack, collectionId: string): Promise<number> {
  let busy = 0;
  for (const status of ['queued', 'processing'] as const) {
    busy += (await call(stack, 'GET', `/ingest/jobs?collection_id=${collectionId}&status=${status}&limit=1`)).length;
  }
  return busy;
}

export async function jobsOf(stack: Stack, collectionId: string): Promise<Schema<'IngestJob'>[]> {
  const jobs: Schema<'IngestJob'>[] = [];
  for (let offset = 0; ; offset += 200) {
    const page = await call(stack, 'GET', `/ingest/jobs?collection_id=${collectionId}&limit=200&offset=${offset}`);
    jobs.push(...page);
    if (page.length < 200) return jobs;
  }
}

export async function untilIndexed(stack: Stack, collectionId: string, deadline: number): Promise<number> {
  while ((await busyJobs(stack, collectionId)) > 0) {
    if (Date.now() > deadline) throw new Error(`ingest jobs of ${collectionId} still at work`);
    await sleep(stack.pollMs);
  }
  return performance.now();
}

export async function documentsOf(stack: Stack, collectionId: string) {
  return call(stack, 'GET', `/collections/${collectionId}/documents`);
}

/** The source's latest run once it has ended (and is not `after`), with when this client saw it end. */
export async function runEnded(stack: Stack, sourceId: string, after?: string): Promise<{ run: Run; seen: number }> {
  const deadline = Date.now() + TIMEOUT_MS;
  for (;;) {
    const source: Source = await call(stack, 'GET', `/sources/${sourceId}`);
    const run = source.last_run;
    if (run && run.id !== after && run.status !== 'running') return { run, seen: performance.now() };
    if (Date.now() > deadline) throw new Error(`sync of ${sourceId} still running: ${JSON.stringify(run)}`);
    await sleep(stack.pollMs);
  }
}

export const runMs = (run: Run) => Date.parse(run.finished_at ?? '') - Date.parse(run.started_at);
