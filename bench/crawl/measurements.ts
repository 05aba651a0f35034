/** The timed parts of bench/crawl/crawl.ts: the same pages uploaded, crawled and synced, with the ingest worker's log and the embedding requests it made. */
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileForm } from '../../devstack/harness/api-call.ts';
import type { SiteRequest, TestSite } from '../../devstack/harness/site-server.ts';
import { call, jobsOf, runEnded, runMs, type Stack, untilIndexed } from './api.ts';
import { type Counts, PAGES, type Run, type Source, TIMEOUT_MS } from './settings.ts';
import { files } from './site.ts';

/** The ingest worker's requests of one kind, by its log: how many, their summed and their longest time. */
export interface WorkerTime {
  count: number;
  ms: number;
  maxMs: number;
}

type WorkerTimes = Record<'crawl' | 'steps', WorkerTime>;

const logLines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n') : []);

/** Crawl steps (`POST /crawl`) and ingest steps (`POST /steps`) the worker served after line `from` of its log. */
function workerTimes(file: string, from: number): WorkerTimes {
  const times: WorkerTimes = { crawl: { count: 0, ms: 0, maxMs: 0 }, steps: { count: 0, ms: 0, maxMs: 0 } };
  for (const line of logLines(file).slice(from)) {
    const match = /POST \/(crawl|steps) \d{3} [^(]*\((\d+)ms\)/.exec(line);
    if (!match) continue;
    const time = times[match[1] as keyof WorkerTimes];
    const ms = Number(match[2]);
    time.count++;
    time.ms += ms;
    time.maxMs = Math.max(time.maxMs, ms);
  }
  return times;
}

/** The log's length now, to read what follows; the lines are written a moment after each request ends. */
const logMark = (file: string) => logLines(file).length - 1;

export interface Timed {
  wallMs: number;
  documents: number;
  embeddingCalls: number;
  worker: WorkerTimes;
}

export interface CrawlTiming extends Timed {
  /** The run's own duration (started_at to finished_at). */
  runMs: number;
  counts: Counts;
  /** From the site's log: when the first and the last page were fetched, from the POST. */
  firstFetchMs: number;
  lastFetchMs: number;
  /** From the POST to the poll that saw the run end. */
  runSeenMs: number;
  /** Pauses between two page fetches longer than the politeness delay and 150 ms: the hops between crawl steps. */
  pauses: number;
  pauseMs: number;
}

export interface SyncTiming {
  wallMs: number;
  runMs: number;
  counts: Counts;
  embeddingCalls: number;
  newJobs: number;
  /** Page requests the site answered 304, and all page requests. */
  notModified: number;
  pageRequests: number;
  worker: WorkerTimes;
}

export const embeddingCalls = ({ proxy }: Stack, from: number, to: number) =>
  proxy.calls.filter((c) => c.path.endsWith('/embeddings') && c.start >= from && c.start <= to).length;

const pageRequestsOf = (entries: SiteRequest[]) => entries.filter((r) => r.path !== '/robots.txt' && r.path !== '/sitemap.xml');

export async function uploadRun(stack: Stack, collectionId: string): Promise<Timed> {
  const toSend = files();
  const mark = logMark(stack.ingestLog);
  const start = performance.now();
  for (const file of toSend) {
    const form = fileForm(file.name, file.bytes);
    await call(stack, 'POST', `/ingest/?collection_id=${collectionId}`, form);
  }
  const end = await untilIndexed(stack, collectionId, Date.now() + TIMEOUT_MS);
  await checkAllSucceeded(stack, collectionId, toSend.length);
  await sleep(200);
  return {
    wallMs: end - start,
    documents: toSend.length,
    embeddingCalls: embeddingCalls(stack, start, end),
    worker: workerTimes(stack.ingestLog, mark),
  };
}

export async function checkAllSucceeded(stack: Stack, collectionId: string, expected: number) {
  const jobs = await jobsOf(stack, collectionId);
  const bad = jobs.filter((job) => job.status !== 'succeeded');
  if (jobs.length !== expected || bad.length > 0) {
    throw new Error(
      `${collectionId}: ${jobs.length} jobs, expected ${expected}; not succeeded: ${JSON.stringify(bad.slice(0, 3))}`,
    );
  }
}

export async function crawlRun(
  stack: Stack,
  site: TestSite,
  collectionId: string,
): Promise<{ sourceId: string; timing: CrawlTiming }> {
  site.clear();
  const mark = logMark(stack.ingestLog);
  const start = performance.now();
  const startedAt = Date.now();
  const source: Source = await call(
    stack,
    'POST',
    '/sources',
    {
      kind: 'site',
      url: site.url('/'),
      collection_id: collectionId,
      sitemap_url: site.url('/sitemap.xml'),
      max_pages: PAGES + 1,
    },
    201,
  );
  const { run, seen } = await runEnded(stack, source.id);
  const end = await untilIndexed(stack, collectionId, Date.now() + TIMEOUT_MS);
  if (run.status !== 'succeeded') throw new Error(`the crawl ended ${run.status}: ${JSON.stringify(run)}`);
  await checkAllSucceeded(stack, collectionId, PAGES + 1);
  await sleep(200);
  const fetches = pageRequestsOf(site.log).map((r) => r.at - startedAt);
  const gaps = fetches.slice(1).map((at, i) => at - (fetches[i] as number));
  const pauses = gaps.filter((gap) => gap > stack.delayMs + 150);
  return {
    sourceId: source.id,
    timing: {
      wallMs: end - start,
      documents: PAGES + 1,
      embeddingCalls: embeddingCalls(stack, start, end),
      worker: workerTimes(stack.ingestLog, mark),
      runMs: runMs(run),
      counts: run.counts,
      firstFetchMs: fetches[0] ?? Number.NaN,
      lastFetchMs: fetches.at(-1) ?? Number.NaN,
      runSeenMs: seen - start,
      pauses: pauses.length,
      pauseMs: pauses.reduce((sum, gap) => sum + gap, 0),
    },
  };
}

export async function syncRun(stack: Stack, site: TestSite, sourceId: string, collectionId: string): Promise<SyncTiming> {
  const jobsBefore = (await jobsOf(stack, collectionId)).length;
  site.clear();
  const mark = logMark(stack.ingestLog);
  const start = performance.now();
  const started: Run = await call(stack, 'POST', `/sources/${sourceId}/sync`, undefined, 202);
  const { run, seen } = await runEnded(stack, sourceId);
  if (run.id !== started.id) throw new Error(`another run than ${started.id} ended: ${run.id}`);
  await sleep(200);
  const pages = pageRequestsOf(site.log);
  return {
    wallMs: seen - start,
    runMs: runMs(run),
    counts: run.counts,
    embeddingCalls: embeddingCalls(stack, start, performance.now()),
    newJobs: (await jobsOf(stack, collectionId)).length - jobsBefore,
    notModified: pages.filter((r) => r.status === 304).length,
    pageRequests: pages.length,
    worker: workerTimes(stack.ingestLog, mark),
  };
}
