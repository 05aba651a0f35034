/**
 * Crawling and syncing a site (issue 24), against a local deployment of its own, in one run:
 *
 *   npx tsx bench/crawl/crawl.ts [--pages 200] [--runs 3] [--operator-run if-missed] [--out FILE] [--append]
 *
 * 1. Overhead. A loopback site (devstack/harness/site-server.ts) of `--pages` article pages and an index linking
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
import { appendFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CRAWLER_TOKEN } from '#core/sources/limits.ts';
import { fileForm } from '../../devstack/harness/api-call.ts';
import { signUpUser } from '../../devstack/harness/auth-client.ts';
import { startSite, type TestSite } from '../../devstack/harness/site-server.ts';
import { fastRetries, startLocalDeployment, UNLIMITED_RATES } from '../../devstack/local/deployment.ts';
import { freePort } from '../../devstack/ports.ts';
import { IngestSettings } from '../../workers/ingest/src/config.ts';
import { fixed, log } from '../harness/format.ts';
import { loadFigures, machine } from '../harness/machine.ts';
import { median } from '../harness/stats.ts';
import { type ModelProxy, startModelProxy } from '../harness/timing-proxies.ts';
import { call, createCollection, type Stack, untilIndexed } from './api.ts';
import { type Check, correctness, expectCounts, robotsCheck } from './checks.ts';
import { type CrawlTiming, crawlRun, type SyncTiming, syncRun, type Timed, uploadRun, type WorkerTime } from './measurements.ts';
import { CHANGED, type Counts, flags, GONE, PAGES, TARGET_CRAWL_RATIO, TARGET_SYNC_SHARE, TIMEOUT_MS } from './settings.ts';
import { pageHtml, publish } from './site.ts';

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

const command = `npx tsx bench/crawl/crawl.ts ${process.argv.slice(2).join(' ')}`.trim();
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
