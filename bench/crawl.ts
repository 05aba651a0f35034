/**
 * Crawling and syncing a site (issue 24), against a local deployment of its own, in one run:
 *
 *   npx tsx bench/crawl.ts [--pages 200] [--runs 3] [--operator-run if-missed] [--out FILE] [--append]
 *
 * 1. Overhead. A loopback site (test/support/site-server.ts) of `--pages` article pages and an index linking
 *    them, all listed in a sitemap, goes into two fresh collections each run: uploaded as HTML files through
 *    `POST /ingest/` (one after another), and crawled as a site source. Each is timed until every document's
 *    ingest job has ended. Runs alternate which goes first; the report gives medians and crawl ÷ upload.
 * 2. Each run's source is synced again with nothing changed: wall time against its own first crawl, and the
 *    requests for embeddings the ingest worker sent meanwhile (a counting proxy in front of its model endpoint).
 * 3. On the last run's source, 10 pages change and 5 answer 404: one sync must count exactly 10 changed (new
 *    documents for those, the same ids for the rest) and 5 gone; the next must remove those 5 and nothing else.
 * 4. A second site whose robots.txt disallows a folder to `rag-service-crawler`: its log must show none fetched.
 *
 * All of it runs first at the ingest worker's crawl defaults. `--operator-run` then repeats it on a fresh
 * deployment with CRAWL_HOST_DELAY_MS=`--operator-delay` (0: a site of the deployment's own operator, which needs
 * no politeness), when a target was missed (`if-missed`), `always` or `never`. Checks that fail end the run with
 * exit code 1 after the report; a missed target does not. `--append` adds the Markdown report to docs/benchmarks.md.
 */
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CRAWLER_TOKEN } from '#core/sources/limits.ts';
import { fastRetries, startLocalDeployment, UNLIMITED_RATES } from '../devstack/local/deployment.ts';
import { freePort } from '../devstack/ports.ts';
import { callApi, fileForm, type Schema } from '../test/support/api-call.ts';
import { signUpUser } from '../test/support/auth-client.ts';
import { type SiteRequest, sitemapXml, startSite, type TestSite } from '../test/support/site-server.ts';
import { IngestSettings } from '../workers/ingest/src/config.ts';
import { oneOf, readFlags, text, toggle, whole } from './flags.ts';
import { fixed, log } from './format.ts';
import { loadFigures, machine } from './machine.ts';
import { median } from './stats.ts';
import { type ModelProxy, startModelProxy } from './timing-proxies.ts';

const flags = readFlags({
  pages: whole('200', 20, 1000),
  runs: whole('3', 1, 20),
  'operator-run': oneOf('if-missed', ['if-missed', 'always', 'never'] as const),
  'operator-delay': whole('0', 0, 10_000),
  'poll-ms': whole('100', 10, 5_000),
  out: text(),
  append: toggle(),
});
const PAGES = flags.pages;
const CHANGED = 10;
const GONE = 5;
const TARGET_CRAWL_RATIO = 1.1;
const TARGET_SYNC_SHARE = 0.1;
const TIMEOUT_MS = 900_000;

type Source = Schema<'WebSource'>;
type Run = Schema<'WebSourceRun'>;
type Counts = Run['counts'];

// ---------------------------------------------------------------- the site

/** A seeded generator, so that every run serves the same pages. */
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const SYLLABLES = [
  'bar',
  'cal',
  'den',
  'fen',
  'gar',
  'hol',
  'kes',
  'lin',
  'mor',
  'nes',
  'or',
  'pel',
  'quin',
  'ros',
  'stan',
  'tor',
  'vel',
  'wick',
];
const THINGS = [
  'lighthouse',
  'tide mill',
  'rope walk',
  'salt works',
  'ferry',
  'observatory',
  'seed bank',
  'clock tower',
  'weir',
  'market hall',
];
const TRADES = ['keepers', 'millers', 'surveyors', 'weavers', 'engineers', 'archivists', 'pilots', 'masons'];
const VERBS = ['rebuilt', 'extended', 'surveyed', 'repaired', 'moved', 'restored', 'measured', 'replaced'];
const MATERIALS = ['granite', 'oak', 'cast iron', 'brick', 'limestone', 'copper', 'slate', 'larch'];
const MONTHS = ['January', 'March', 'April', 'June', 'August', 'September', 'October', 'December'];

/** One article's title and paragraphs: distinct names, numbers and facts on every page. */
function article(n: number): { title: string; paragraphs: string[] } {
  const rnd = random(1000 + n);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)] as T;
  const name = (parts: number) => {
    const word = Array.from({ length: parts }, () => pick(SYLLABLES)).join('');
    return word.charAt(0).toUpperCase() + word.slice(1);
  };
  const town = name(2);
  const thing = pick(THINGS);
  const title = `The ${thing} of ${town}`;
  const year = () => 1700 + Math.floor(rnd() * 320);
  const sentence = () =>
    pick([
      () => `In ${pick(MONTHS)} ${year()} the ${pick(TRADES)} of ${town} ${pick(VERBS)} the ${thing} in ${pick(MATERIALS)}.`,
      () =>
        `${name(2)} ${name(3)}, who kept its ledgers for ${2 + Math.floor(rnd() * 40)} years, wrote that the ${thing} needed ${pick(MATERIALS)} from ${name(2)}.`,
      () =>
        `Its ${pick(['north', 'east', 'south', 'west'])} wall stands ${3 + Math.floor(rnd() * 60)} metres from the old road to ${name(2)}.`,
      () =>
        `A storm in ${year()} took ${pick(['the roof', 'two bays', 'the upper floor', 'the landing stage'])}, and the town paid ${10 + Math.floor(rnd() * 900)} pounds to have it ${pick(VERBS)}.`,
      () =>
        `Visitors can see the ${pick(['original plans', 'first lamp', 'iron gears', 'tide tables'])} in the ${name(2)} museum on ${pick(MONTHS)} weekends.`,
      () => `The ${pick(TRADES)} who worked there were paid in ${pick(['grain', 'coin', 'salt', 'cloth'])} until ${year()}.`,
    ])();
  const paragraphs = Array.from({ length: 3 + Math.floor(rnd() * 3) }, () =>
    Array.from({ length: 4 + Math.floor(rnd() * 3) }, sentence).join(' '),
  );
  return { title: `${title} (note ${n})`, paragraphs };
}

const pagePath = (n: number) => `/notes/${String(n).padStart(4, '0')}-field-note`;

/** A page as a small site would serve it: a header and navigation, the article, related links, a footer. */
function pageHtml(n: number, extra?: string): string {
  const { title, paragraphs } = article(n);
  const related = [n - 1, n + 1, ((n * 7) % PAGES) + 1].filter(
    (m, i, all) => m >= 1 && m <= PAGES && m !== n && all.indexOf(m) === i,
  );
  const body = extra ? [...paragraphs, extra] : paragraphs;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Coastal Field Notes</title><meta name="description" content="${body[0]?.slice(0, 150)}"></head>
<body><header><p class="site"><a href="/">Coastal Field Notes</a></p><nav><a href="/">All notes</a></nav></header>
<main><article><h1>${title}</h1><p class="byline">Field note ${n}, written up by the Coastal Survey volunteers.</p>
${body.map((paragraph) => `<p>${paragraph}</p>`).join('\n')}
<h2>Related notes</h2><ul>${related.map((m) => `<li><a href="${pagePath(m)}">${article(m).title}</a></li>`).join('')}</ul>
</article></main>
<footer><p>Coastal Field Notes is written by volunteers. Corrections are welcome at the harbour office.</p></footer></body></html>
`;
}

function indexHtml(): string {
  const items = Array.from({ length: PAGES }, (_, i) => `<li><a href="${pagePath(i + 1)}">${article(i + 1).title}</a></li>`);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Coastal Field Notes</title></head>
<body><header><p class="site">Coastal Field Notes</p></header><main><h1>All field notes</h1>
<p>Every note the Coastal Survey volunteers have written up, oldest first.</p><ul>
${items.join('\n')}
</ul></main></body></html>
`;
}

const html = (body: string) => ({ title: '', raw: { body, type: 'text/html; charset=utf-8' } });

/** The site as first published: the index, the pages and the sitemap; no robots.txt. */
function publish(site: TestSite) {
  site.robots(null);
  site.set('/', html(indexHtml()));
  for (let n = 1; n <= PAGES; n++) site.set(pagePath(n), html(pageHtml(n)));
  site.set('/sitemap.xml', sitemapXml([site.url('/'), ...Array.from({ length: PAGES }, (_, i) => site.url(pagePath(i + 1)))]));
}

/** The same pages as files to upload, the index included, so that both ways make the same documents. */
const files = () => [
  { name: 'index.html', bytes: new TextEncoder().encode(indexHtml()) },
  ...Array.from({ length: PAGES }, (_, i) => ({
    name: `${pagePath(i + 1).slice('/notes/'.length)}.html`,
    bytes: new TextEncoder().encode(pageHtml(i + 1)),
  })),
];

// ---------------------------------------------------------------- the API

interface Stack {
  apiUrl: string;
  token: string;
  pollMs: number;
  proxy: ModelProxy;
  /** The ingest worker's output, where wrangler writes a line with the time of each request. */
  ingestLog: string;
  delayMs: number;
}

async function call<M extends 'GET' | 'POST', P extends string>(stack: Stack, method: M, path: P, body?: unknown, status = 200) {
  const response = await callApi(stack.apiUrl, method, path, { token: stack.token, body });
  if (response.status !== status) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

async function createCollection(stack: Stack, name: string): Promise<string> {
  return (await call(stack, 'POST', '/collections/', { name })).id;
}

async function busyJobs(stack: Stack, collectionId: string): Promise<number> {
  let busy = 0;
  for (const status of ['queued', 'processing'] as const) {
    busy += (await call(stack, 'GET', `/ingest/jobs?collection_id=${collectionId}&status=${status}&limit=1`)).length;
  }
  return busy;
}

async function jobsOf(stack: Stack, collectionId: string): Promise<Schema<'IngestJob'>[]> {
  const jobs: Schema<'IngestJob'>[] = [];
  for (let offset = 0; ; offset += 200) {
    const page = await call(stack, 'GET', `/ingest/jobs?collection_id=${collectionId}&limit=200&offset=${offset}`);
    jobs.push(...page);
    if (page.length < 200) return jobs;
  }
}

async function untilIndexed(stack: Stack, collectionId: string, deadline: number): Promise<number> {
  while ((await busyJobs(stack, collectionId)) > 0) {
    if (Date.now() > deadline) throw new Error(`ingest jobs of ${collectionId} still at work`);
    await sleep(stack.pollMs);
  }
  return performance.now();
}

async function documentsOf(stack: Stack, collectionId: string) {
  return call(stack, 'GET', `/collections/${collectionId}/documents`);
}

/** The source's latest run once it has ended (and is not `after`), with when this client saw it end. */
async function runEnded(stack: Stack, sourceId: string, after?: string): Promise<{ run: Run; seen: number }> {
  const deadline = Date.now() + TIMEOUT_MS;
  for (;;) {
    const source: Source = await call(stack, 'GET', `/sources/${sourceId}`);
    const run = source.last_run;
    if (run && run.id !== after && run.status !== 'running') return { run, seen: performance.now() };
    if (Date.now() > deadline) throw new Error(`sync of ${sourceId} still running: ${JSON.stringify(run)}`);
    await sleep(stack.pollMs);
  }
}

const runMs = (run: Run) => Date.parse(run.finished_at ?? '') - Date.parse(run.started_at);

// ---------------------------------------------------------------- the measurements

/** The ingest worker's requests of one kind, by its log: how many, their summed and their longest time. */
interface WorkerTime {
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

interface Timed {
  wallMs: number;
  documents: number;
  embeddingCalls: number;
  worker: WorkerTimes;
}

interface CrawlTiming extends Timed {
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

interface SyncTiming {
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

const embeddingCalls = ({ proxy }: Stack, from: number, to: number) =>
  proxy.calls.filter((c) => c.path.endsWith('/embeddings') && c.start >= from && c.start <= to).length;

const pageRequestsOf = (entries: SiteRequest[]) => entries.filter((r) => r.path !== '/robots.txt' && r.path !== '/sitemap.xml');

async function uploadRun(stack: Stack, collectionId: string): Promise<Timed> {
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

async function checkAllSucceeded(stack: Stack, collectionId: string, expected: number) {
  const jobs = await jobsOf(stack, collectionId);
  const bad = jobs.filter((job) => job.status !== 'succeeded');
  if (jobs.length !== expected || bad.length > 0) {
    throw new Error(
      `${collectionId}: ${jobs.length} jobs, expected ${expected}; not succeeded: ${JSON.stringify(bad.slice(0, 3))}`,
    );
  }
}

async function crawlRun(stack: Stack, site: TestSite, collectionId: string): Promise<{ sourceId: string; timing: CrawlTiming }> {
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

async function syncRun(stack: Stack, site: TestSite, sourceId: string, collectionId: string): Promise<SyncTiming> {
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

/** A check of the run: printed, and failing the run at the end when false. */
interface Check {
  what: string;
  ok: boolean;
  detail: string;
}

function expectCounts(what: string, counts: Counts, expected: Partial<Counts>): Check {
  const wrong = Object.entries(expected).filter(([key, value]) => counts[key as keyof Counts] !== value);
  return { what, ok: wrong.length === 0, detail: JSON.stringify(counts) };
}

async function correctness(stack: Stack, site: TestSite, sourceId: string, collectionId: string) {
  const byPath = async () =>
    new Map(
      (await documentsOf(stack, collectionId))
        .filter((doc) => doc.source_id === sourceId)
        .map((doc) => [new URL(doc.name).pathname, doc.id]),
    );
  const before = await byPath();
  const changedPaths = Array.from({ length: CHANGED }, (_, i) => pagePath(i + 1));
  const gonePaths = Array.from({ length: GONE }, (_, i) => pagePath(CHANGED + i + 1));
  for (const [i, path] of changedPaths.entries()) {
    site.set(
      path,
      html(
        pageHtml(
          i + 1,
          `Update: in the spring survey the volunteers found a second ${i + 1}-metre stone stair beneath the floor.`,
        ),
      ),
    );
  }
  for (const path of gonePaths) site.set(path, { title: 'gone', status: 404 });
  const unchanged = PAGES + 1 - CHANGED - GONE;

  const firstStart = performance.now();
  const first = await syncRun(stack, site, sourceId, collectionId);
  const firstIndexed = await untilIndexed(stack, collectionId, Date.now() + TIMEOUT_MS);
  await sleep(200);
  const changedEmbeddingCalls = embeddingCalls(stack, firstStart, firstIndexed);
  const afterFirst = await byPath();
  const same = [...before.keys()].filter((path) => !changedPaths.includes(path));
  const checks: Check[] = [
    expectCounts(
      `sync after ${CHANGED} changes and ${GONE} pages gone: ${CHANGED} changed, ${GONE} gone, nothing removed`,
      first.counts,
      {
        added: 0,
        changed: CHANGED,
        unchanged,
        gone: GONE,
        removed: 0,
        failed: 0,
      },
    ),
    {
      what: `the ${CHANGED} changed pages have new documents`,
      ok: changedPaths.every((path) => afterFirst.has(path) && afterFirst.get(path) !== before.get(path)),
      detail: `${changedPaths.filter((path) => afterFirst.has(path) && afterFirst.get(path) !== before.get(path)).length} new ids`,
    },
    {
      what: `the other ${same.length} pages (the gone ones included) keep their documents`,
      ok: afterFirst.size === before.size && same.every((path) => afterFirst.get(path) === before.get(path)),
      detail: `${same.filter((path) => afterFirst.get(path) === before.get(path)).length} same ids, ${afterFirst.size} documents`,
    },
  ];

  const second = await syncRun(stack, site, sourceId, collectionId);
  const afterSecond = await byPath();
  const kept = [...afterFirst.keys()].filter((path) => !gonePaths.includes(path));
  checks.push(
    expectCounts(`the next sync: the ${GONE} gone pages removed, nothing changed`, second.counts, {
      added: 0,
      changed: 0,
      unchanged: unchanged + CHANGED,
      gone: GONE,
      removed: GONE,
      failed: 0,
    }),
    {
      what: `the ${GONE} removed pages' documents are gone`,
      ok: gonePaths.every((path) => !afterSecond.has(path)),
      detail: `${gonePaths.filter((path) => afterSecond.has(path)).length} left`,
    },
    {
      what: `the other ${kept.length} documents are as they were`,
      ok: afterSecond.size === kept.length && kept.every((path) => afterSecond.get(path) === afterFirst.get(path)),
      detail: `${afterSecond.size} documents, ${kept.filter((path) => afterSecond.get(path) === afterFirst.get(path)).length} same ids`,
    },
    { what: 'the second sync started no ingest job', ok: second.newJobs === 0, detail: `${second.newJobs} jobs` },
  );
  return { changedSync: first, changedEmbeddingCalls, removingSync: second, checks };
}

/** A site whose robots.txt keeps our crawler out of /private/ (and another robot out of everything). */
async function robotsCheck(stack: Stack, site: TestSite): Promise<{ counts: Counts; fetched: string[]; checks: Check[] }> {
  const publicPages = Array.from({ length: 20 }, (_, i) => `/guide/${i + 1}`);
  const privatePages = Array.from({ length: 10 }, (_, i) => `/private/${i + 1}`);
  site.robots(`User-agent: other-bot\nDisallow: /\n\nUser-agent: ${CRAWLER_TOKEN}\nDisallow: /private/\n`);
  const all = [...publicPages, ...privatePages];
  site.set('/', { title: 'Guide', text: 'Every page of the guide.', links: all });
  for (const [i, path] of all.entries()) {
    site.set(path, { title: `Guide page ${i + 1}`, text: article(5000 + i).paragraphs.join('\n'), links: ['/'] });
  }
  site.set('/sitemap.xml', sitemapXml(all.map((path) => site.url(path))));
  site.clear();
  const collectionId = await createCollection(stack, 'robots');
  const source: Source = await call(
    stack,
    'POST',
    '/sources',
    { kind: 'site', url: site.url('/'), collection_id: collectionId, sitemap_url: site.url('/sitemap.xml') },
    201,
  );
  const { run } = await runEnded(stack, source.id);
  await untilIndexed(stack, collectionId, Date.now() + TIMEOUT_MS);
  const fetched = site.log.map((r) => r.path);
  const forbidden = fetched.filter((path) => path.startsWith('/private/'));
  return {
    counts: run.counts,
    fetched,
    checks: [
      {
        what: `robots.txt: none of the ${privatePages.length} disallowed pages fetched`,
        ok: forbidden.length === 0,
        detail: `${forbidden.length} fetched`,
      },
      expectCounts(`robots.txt: ${privatePages.length} skipped, the ${publicPages.length + 1} others added`, run.counts, {
        skipped: privatePages.length,
        added: publicPages.length + 1,
        failed: 0,
      }),
      {
        what: 'every request named the crawler',
        ok: site.log.every((r) => r.userAgent.includes(CRAWLER_TOKEN)),
        detail: [...new Set(site.log.map((r) => r.userAgent))].join(', '),
      },
    ],
  };
}

// ---------------------------------------------------------------- one deployment, one setting

const DEFAULTS = {
  CRAWL_HOST_DELAY_MS: IngestSettings.shape.CRAWL_HOST_DELAY_MS.parse(undefined),
  CRAWL_HOST_CONCURRENCY: IngestSettings.shape.CRAWL_HOST_CONCURRENCY.parse(undefined),
  CRAWL_PAGES_PER_STEP: IngestSettings.shape.CRAWL_PAGES_PER_STEP.parse(undefined),
};

interface Setting {
  label: string;
  /** What the ingest worker was given; the rest are its defaults. */
  vars: Record<string, string>;
}

async function measure(setting: Setting, site: TestSite, robotsSite: TestSite) {
  let proxy: ModelProxy | undefined;
  // Kept after the run, for a closer look at the steps' times.
  const ingestLog = join(tmpdir(), `bench-crawl-${process.pid}-${setting.label.replace(/\W+/g, '-')}-ingest.log`);
  const deployment = await startLocalDeployment({
    devstack: { qstashBackoffMs: fastRetries },
    scoring: false,
    vars: { ...UNLIMITED_RATES, INGEST_TRUSTED_ORIGINS: `${site.origin},${robotsSite.origin}`, ...setting.vars },
    quiet: true,
    logFiles: { api: process.env.BENCH_API_LOG, ingest: ingestLog },
    // The ingest worker's model calls (embeddings, and image descriptions, of which HTML pages have none)
    // go through a proxy that records each, so that a sync's embedding requests can be counted.
    beforeWorkers: async (devstack) => {
      const model = new URL(devstack.openaiBaseUrl);
      const started = await startModelProxy(model.origin);
      proxy = started;
      return { vars: { ingest: { OPENAI_BASE_URL: `${started.url}${model.pathname}` } }, stop: started.stop };
    },
  });
  try {
    if (!proxy) throw new Error('the model proxy did not start');
    const { stack: devstack } = deployment;
    const user = await signUpUser(
      { supabaseUrl: devstack.supabaseUrl, anonKey: devstack.keys.anonKey },
      `bench-crawl-${crypto.randomUUID().slice(0, 8)}@example.com`,
    );
    const delayMs = Number(setting.vars.CRAWL_HOST_DELAY_MS ?? DEFAULTS.CRAWL_HOST_DELAY_MS);
    const stack: Stack = { apiUrl: deployment.api.url, token: user.token, pollMs: flags['poll-ms'], proxy, ingestLog, delayMs };
    publish(site);
    const embeddings = devstack.embeddings ? `${devstack.embeddings.model} (${devstack.embeddings.dimension} d)` : 'none';
    log(`\n## ${setting.label}: ingest worker ${JSON.stringify(setting.vars)}, embeddings ${embeddings}, its log ${ingestLog}`);

    // One upload first, so that the first measured run does not pay for the workers' first requests.
    const warm = await createCollection(stack, 'warm-up');
    await call(stack, 'POST', `/ingest/?collection_id=${warm}`, fileForm('warm.html', pageHtml(1)));
    await untilIndexed(stack, warm, Date.now() + TIMEOUT_MS);

    const runs: { order: string; upload: Timed; crawl: CrawlTiming; sync: SyncTiming }[] = [];
    let lastSource = { sourceId: '', collectionId: '' };
    for (let i = 0; i < flags.runs; i++) {
      const crawlFirst = i % 2 === 1;
      let upload: Timed | undefined;
      let crawled: { timing: CrawlTiming; sync: SyncTiming } | undefined;
      for (const step of crawlFirst ? ['crawl', 'upload'] : ['upload', 'crawl']) {
        if (step === 'upload') {
          upload = await uploadRun(stack, await createCollection(stack, `upload ${i + 1}`));
          log(`run ${i + 1} upload: ${fixed(upload.wallMs / 1000, 2)} s, ${upload.embeddingCalls} embedding requests`);
        } else {
          const collectionId = await createCollection(stack, `crawl ${i + 1}`);
          const { sourceId, timing } = await crawlRun(stack, site, collectionId);
          log(
            `run ${i + 1} crawl: ${fixed(timing.wallMs / 1000, 2)} s (run ${fixed(timing.runMs / 1000, 2)} s), ${timing.embeddingCalls} embedding requests, ${JSON.stringify(timing.counts)}`,
          );
          const sync = await syncRun(stack, site, sourceId, collectionId);
          log(
            `run ${i + 1} sync, unchanged: ${fixed(sync.wallMs / 1000, 2)} s, ${sync.embeddingCalls} embedding requests, ${sync.notModified}/${sync.pageRequests} answered 304, ${JSON.stringify(sync.counts)}`,
          );
          crawled = { timing, sync };
          lastSource = { sourceId, collectionId };
        }
      }
      if (!upload || !crawled) throw new Error('a run lacks a measurement');
      runs.push({ order: crawlFirst ? 'crawl first' : 'upload first', upload, crawl: crawled.timing, sync: crawled.sync });
    }

    const checks: Check[] = runs.flatMap((run, i) => [
      expectCounts(`run ${i + 1}: the crawl added every page`, run.crawl.counts, {
        found: PAGES + 1,
        added: PAGES + 1,
        failed: 0,
      }),
      expectCounts(`run ${i + 1}: the unchanged sync found every page unchanged`, run.sync.counts, {
        unchanged: PAGES + 1,
        added: 0,
        changed: 0,
        gone: 0,
        removed: 0,
      }),
      {
        what: `run ${i + 1}: the unchanged sync started no ingest job`,
        ok: run.sync.newJobs === 0,
        detail: `${run.sync.newJobs}`,
      },
    ]);
    const changes = await correctness(stack, site, lastSource.sourceId, lastSource.collectionId);
    checks.push(...changes.checks);
    const robots = await robotsCheck(stack, robotsSite);
    checks.push(...robots.checks);

    const upload = median(runs.map((r) => r.upload.wallMs));
    const crawl = median(runs.map((r) => r.crawl.wallMs));
    const syncShares = runs.map((r) => r.sync.wallMs / r.crawl.wallMs);
    const summary = {
      uploadMs: upload,
      crawlMs: crawl,
      crawlRunMs: median(runs.map((r) => r.crawl.runMs)),
      uploadPagesPerS: (PAGES + 1) / (upload / 1000),
      crawlPagesPerS: (PAGES + 1) / (crawl / 1000),
      crawlRatio: crawl / upload,
      crawlRatios: runs.map((r) => r.crawl.wallMs / r.upload.wallMs),
      syncMs: median(runs.map((r) => r.sync.wallMs)),
      syncRunMs: median(runs.map((r) => r.sync.runMs)),
      syncShare: median(syncShares),
      syncEmbeddingCalls: Math.max(...runs.map((r) => r.sync.embeddingCalls)),
    };
    return {
      setting,
      crawlSettings: { ...DEFAULTS, ...Object.fromEntries(Object.entries(setting.vars).map(([k, v]) => [k, Number(v)])) },
      embeddings,
      runs,
      summary,
      targets: {
        crawl: summary.crawlRatio <= TARGET_CRAWL_RATIO,
        syncEmbeddings: summary.syncEmbeddingCalls === 0,
        syncShare: summary.syncShare <= TARGET_SYNC_SHARE,
      },
      changes: {
        changedSync: changes.changedSync,
        changedEmbeddingCalls: changes.changedEmbeddingCalls,
        removingSync: changes.removingSync,
      },
      robots: {
        counts: robots.counts,
        requests: robots.fetched.length,
        disallowedFetched: robots.fetched.filter((path) => path.startsWith('/private/')).length,
      },
      checks,
    };
  } finally {
    await deployment.stop();
  }
}

type Result = Awaited<ReturnType<typeof measure>>;

// ---------------------------------------------------------------- the report

const s = (ms: number) => fixed(ms / 1000, 2);
const pct = (share: number) => `${fixed(share * 100, 0)} %`;

function report(results: Result[], command: string, m: ReturnType<typeof machine>, loads: number[][]): string {
  const lines = [
    '## Crawling and syncing a site (issue 24)',
    '',
    `**Command:** \`${command}\` (${new Date().toISOString().slice(0, 10)}). ${m.cpu}, ${m.cores} cores, ${fixed(m.memGiB, 0)} GiB, Node ${m.node}; load ${loads.map((l) => l.join(' ')).join(' → ')}.`,
    '',
    `A loopback site of ${PAGES} article pages (3–5 paragraphs each) and an index linking them, all in its sitemap: ${PAGES + 1} documents either way.`,
    'Wall times run until every document’s ingest job has ended; embeddings by the devstack’s model.',
    '',
    '| crawl settings | upload s | crawl s | upload pages/s | crawl pages/s | crawl ÷ upload (≤ 110 %) | unchanged sync s | sync ÷ first crawl (≤ 10 %) | embedding requests in the sync (0) |',
    '| --- | --: | --: | --: | --: | --: | --: | --: | --: |',
  ];
  for (const r of results) {
    const c = r.crawlSettings;
    const x = r.summary;
    lines.push(
      `| ${r.setting.label}: floor ${c.CRAWL_HOST_DELAY_MS} ms (not on a trusted origin such as this site), concurrency ${c.CRAWL_HOST_CONCURRENCY}, ${c.CRAWL_PAGES_PER_STEP} pages a step | ${s(x.uploadMs)} | ${s(x.crawlMs)} | ${fixed(x.uploadPagesPerS)} | ${fixed(x.crawlPagesPerS)} | **${pct(x.crawlRatio)}** ${r.targets.crawl ? 'met' : 'missed'} | ${s(x.syncMs)} | **${pct(x.syncShare)}** ${r.targets.syncShare ? 'met' : 'missed'} | ${x.syncEmbeddingCalls} |`,
    );
  }
  const steps = (t: WorkerTime) => `${t.count}, ${s(t.ms)}`;
  for (const r of results) {
    lines.push(
      '',
      `**Each run, ${r.setting.label}** (medians above). Times in s; steps are the ingest worker's requests by its log (how many, their summed time); pauses are gaps between two page fetches longer than the delay + 150 ms (the hops between crawl steps).`,
      '',
      '| run | order | upload | crawl | crawl ÷ upload | crawl run | last page fetched | pauses | crawl steps | ingest steps: upload / crawl | embedding requests: upload / crawl |',
      '| --- | --- | --: | --: | --: | --: | --: | --: | --: | --: | --: |',
    );
    for (const [i, run] of r.runs.entries()) {
      const { upload, crawl } = run;
      lines.push(
        `| ${i + 1} | ${run.order} | ${s(upload.wallMs)} | ${s(crawl.wallMs)} | ${pct(crawl.wallMs / upload.wallMs)} | ${s(crawl.runMs)} | ${s(crawl.lastFetchMs)} | ${crawl.pauses}, ${s(crawl.pauseMs)} | ${steps(crawl.worker.crawl)} | ${s(upload.worker.steps.ms)} / ${s(crawl.worker.steps.ms)} | ${upload.embeddingCalls} / ${crawl.embeddingCalls} |`,
      );
    }
    lines.push(
      '',
      '| run | unchanged sync | its run | ÷ first crawl | pages answered 304 | crawl steps | longest step | embedding requests | ingest jobs |',
      '| --- | --: | --: | --: | --: | --: | --: | --: | --: |',
    );
    for (const [i, { crawl, sync }] of r.runs.entries()) {
      lines.push(
        `| ${i + 1} | ${s(sync.wallMs)} | ${s(sync.runMs)} | ${pct(sync.wallMs / crawl.wallMs)} | ${sync.notModified} of ${sync.pageRequests} | ${steps(sync.worker.crawl)} | ${s(sync.worker.crawl.maxMs)} | ${sync.embeddingCalls} | ${sync.newJobs} |`,
      );
    }
    const { changedSync, changedEmbeddingCalls, removingSync } = r.changes;
    const counts = (c: Counts) =>
      `found ${c.found}, fetched ${c.fetched}, added ${c.added}, changed ${c.changed}, unchanged ${c.unchanged}, failed ${c.failed}, skipped ${c.skipped}, gone ${c.gone}, removed ${c.removed}`;
    lines.push(
      '',
      `- ${CHANGED} pages changed and ${GONE} answering 404, synced: ${counts(changedSync.counts)} (${s(changedSync.wallMs)} s; ${changedSync.newJobs} ingest jobs, ${changedEmbeddingCalls} embedding requests until they ended).`,
      `- Synced again: ${counts(removingSync.counts)} (${s(removingSync.wallMs)} s, ${removingSync.embeddingCalls} embedding requests).`,
      `- robots.txt disallowing /private/ to ${CRAWLER_TOKEN}: ${counts(r.robots.counts)}; the site saw ${r.robots.requests} requests, ${r.robots.disallowedFetched} of them under /private/.`,
      `- Checks: ${r.checks.filter((c) => c.ok).length} of ${r.checks.length} held${
        r.checks.some((c) => !c.ok)
          ? `; failed: ${r.checks
              .filter((c) => !c.ok)
              .map((c) => `${c.what} (${c.detail})`)
              .join('; ')}`
          : ''
      }.`,
    );
  }
  return `${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------- main

const command = `npx tsx bench/crawl.ts ${process.argv.slice(2).join(' ')}`.trim();
const loads = [loadFigures()];
const site = await startSite(`http://127.0.0.1:${await freePort()}`);
const robotsSite = await startSite(`http://127.0.0.1:${await freePort()}`);
const results: Result[] = [];
try {
  results.push(await measure({ label: 'defaults', vars: {} }, site, robotsSite));
  const first = results[0] as Result;
  const missed = !first.targets.crawl || !first.targets.syncShare || !first.targets.syncEmbeddings;
  if (flags['operator-run'] === 'always' || (flags['operator-run'] === 'if-missed' && missed)) {
    loads.push(loadFigures());
    results.push(
      await measure(
        { label: 'same-operator site', vars: { CRAWL_HOST_DELAY_MS: String(flags['operator-delay']) } },
        site,
        robotsSite,
      ),
    );
  }
} finally {
  loads.push(loadFigures());
  await site.stop();
  await robotsSite.stop();
}

const m = machine();
const markdown = report(results, command, m, loads);
log(`\n${markdown}`);
for (const r of results)
  for (const check of r.checks) log(`${check.ok ? 'ok  ' : 'FAIL'} ${r.setting.label}: ${check.what} — ${check.detail}`);
if (flags.out) {
  writeFileSync(
    flags.out,
    `${JSON.stringify({ command, date: new Date().toISOString(), machine: m, loads, pages: PAGES, results }, null, 2)}\n`,
  );
}
if (flags.append) appendFileSync('docs/benchmarks.md', `\n${markdown}`);
if (results.some((r) => r.checks.some((check) => !check.ok))) process.exit(1);
