/**
 * Query latency benchmark: `POST /query/` streamed as a client reads it, at several concurrencies, with
 * the time spent upstream (embedding, vector query, the model) taken out to leave the service's own
 * overhead. See docs/benchmarks.md, "Query latency".
 *
 *   npx tsx bench/query/query.ts [--delays 10,0] [--concurrency 1,32] [--requests 200,640] [--documents 64] [--top-k 5]
 *                          [--database pglite|postgres] [--usage on,off,cap] [--profile DIR] [--out FILE]
 *
 * --delays       DEVSTACK_TOKEN_DELAY_MS values to run, a fresh stack each (the model's pause between words)
 * --concurrency  clients asking at once, each level after a warm-up of max(10, 2 × c) requests
 * --requests     measured requests per concurrency level (one number, or one per level)
 * --documents    PubMedQA abstracts ingested into the collection; their questions are asked (at least max(c))
 * --database     pglite (the devstack's default, one session for every connection) or postgres: a fresh
 *                database on the PostgreSQL server at TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test),
 *                dropped afterwards
 * --usage        how the API worker records model usage, a fresh stack each (after each delay's): on (the default,
 *                USAGE_RECORDING=on), off (USAGE_RECORDING=off: the ask path before usage was recorded, but for
 *                collecting the stream's usage report) or cap (on, with a DAILY_TOKENS_PER_USER out of reach, so
 *                each question also reads the day's tokens first); `--usage off,on,on,off` measures what recording costs,
 *                repeats allowed
 * --profile      profile the API worker's isolate through its inspector during each measured level, write the
 *                .cpuprofile there, and report its CPU per request (bench/query/cpu.ts) and where it went
 * --out          write every figure and every request's timings as JSON
 *
 * The model's requests go through a timing proxy (bench/harness/timing-proxies.ts), and so do the API worker's
 * Postgres connections, so each request's model time is measured, not estimated.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { formatProfile, type Profile, readProfile } from '../harness/cpu-profile.ts';
import { fail, oneOf, readFlags, text, whole, wholeNumbers } from '../harness/flags.ts';
import { log } from '../harness/format.ts';
import { inspectorPort, workerProfiler } from '../harness/inspector.ts';
import { load, machine } from '../harness/machine.ts';
import { run, type Sample } from '../harness/query-client.ts';
import { cpuWindow, dbBusyShare, httpFloor, measure } from '../harness/query-measure.ts';
import { pubmedCorpus, startQueryStack } from '../harness/query-stack.ts';
import { createCollection, ingestAll, signUp } from '../harness/stack.ts';
import { busyMs, type RequestCpu, requestCpu } from './cpu.ts';
import { type LevelResult, perRequestRow, report, summarize } from './report.ts';

const flags = readFlags({
  delays: wholeNumbers('10,0'),
  concurrency: wholeNumbers('1,32', 1),
  requests: wholeNumbers('200,640'),
  documents: whole('64'),
  'top-k': whole('5', 1, 50),
  database: oneOf('pglite', ['pglite', 'postgres']),
  usage: text('on'),
  profile: text(),
  out: text(),
});
// Repeats allowed, so that one run can go off,on,on,off and put the machine's drift on both.
const usageModes = flags.usage.split(',').map((mode) => mode.trim());
const badModes = usageModes.filter((mode) => !['on', 'off', 'cap'].includes(mode));
if (badModes.length > 0) fail(`--usage: ${badModes.join(', ')} not one of on, off, cap`);
const { delays, concurrency: levels, requests: requestCounts, documents, 'top-k': topK, database } = flags;
if (requestCounts.length !== 1 && requestCounts.length !== levels.length) fail('--requests: one number or one per level');
if (documents < Math.max(...levels)) fail('--documents must be at least the highest concurrency');

async function main() {
  const corpus = pubmedCorpus(documents);
  const { cpus, cpu: model, memGiB, node } = machine();
  log(`machine: ${cpus} CPUs (${model}), ${memGiB.toFixed(1)} GiB, Node ${node}`);
  log(`load average at start: ${load().join(' ')}`);
  const results: (LevelResult & { usage: string })[] = [];
  const perRequest: unknown[] = [];
  const benchStarted = performance.now();

  const usageVars = {
    on: { USAGE_RECORDING: 'on' },
    off: { USAGE_RECORDING: 'off' },
    cap: { USAGE_RECORDING: 'on', DAILY_TOKENS_PER_USER: String(1e12) },
  } as const;
  for (const [delay, usage] of delays.flatMap((d) => usageModes.map((u) => [d, u as keyof typeof usageVars] as const))) {
    process.env.DEVSTACK_TOKEN_DELAY_MS = String(delay);
    const started = performance.now();
    const stack = await startQueryStack(database, usageVars[usage]);
    try {
      log(
        `\nDEVSTACK_TOKEN_DELAY_MS=${delay}, database ${database}, usage ${usage}: stack up in ${((performance.now() - started) / 1000).toFixed(1)} s; embeddings: ${stack.bench.embeddings}`,
      );
      const token = await signUp(stack.bench);
      const collectionId = await createCollection(stack.bench, token, 'query-bench');
      const ingested = await ingestAll(stack.bench, token, collectionId, corpus.files);
      const bad = ingested.files.filter((f) => f.job.status !== 'succeeded');
      if (bad.length > 0)
        throw new Error(`ingestion failed: ${bad.map((f) => `${f.name} ${f.job.status} ${f.job.error_message}`)}`);
      const chunks = ingested.files.reduce((sum, f) => sum + f.job.chunks_total, 0);
      log(`ingested ${ingested.files.length} abstracts (${chunks} chunks) in ${(ingested.wallMs / 1000).toFixed(1)} s`);
      const asking = { apiUrl: stack.bench.apiUrl, token, collectionId, topK };

      for (const [index, concurrency] of levels.entries()) {
        const total = (requestCounts.length === 1 ? requestCounts[0] : requestCounts[index]) as number;
        const warm = await run(asking, corpus.questions, concurrency, Math.max(10, 2 * concurrency));
        const warmErrors = warm.samples.filter((s) => s.error);
        if (warmErrors.length > 0) throw new Error(`warm-up failed: ${warmErrors[0]?.error}`);
        const healthFloor = await httpFloor(stack.bench.apiUrl, 50);
        const before = loadavg();
        const cpu = cpuWindow(stack.bench.apiWranglerPid);
        const profiler = flags.profile ? await apiProfiler(stack.bench.apiWranglerPid) : null;
        await profiler?.start();
        const windowStart = performance.now();
        const { samples, wallMs } = await run(asking, corpus.questions, concurrency, total);
        const windowEnd = performance.now();
        const extra = {
          healthFloor,
          cpu: cpu(samples.length),
          dbBusyShare: dbBusyShare(stack.db, windowStart, windowEnd),
        };
        if (profiler) {
          // The last request's exchange is still being recorded after its `done`.
          await new Promise((resolve) => setTimeout(resolve, 500));
          const file = join(flags.profile as string, `query-${delay}ms-c${concurrency}.cpuprofile`);
          await profiler.stop(file);
          reportIsolateCpu(file, samples, windowEnd + 500, concurrency);
        }
        const after = loadavg();
        const measured = measure(samples, stack.model.calls, stack.db, concurrency);
        const result = summarize(
          { database, delayMs: delay, concurrency, samples, measured, wallMs, load: [before, after] },
          extra,
        );
        results.push({ ...result, usage });
        report(result);
        perRequest.push(...measured.map((m) => perRequestRow(delay, concurrency, m)));
      }
      const unparsed = stack.db.connections.filter((c) => !c.parsed).length;
      if (unparsed > 0)
        log(`warning: ${unparsed} Postgres connections could not be followed (TLS); Postgres figures are incomplete`);
    } finally {
      await stack.stop();
    }
  }
  log(`\nbench wall time ${((performance.now() - benchStarted) / 1000).toFixed(0)} s; load average at end: ${load().join(' ')}`);
  if (flags.out) {
    const facts = { cpus, model, memGiB, node };
    writeFileSync(flags.out, `${JSON.stringify({ machine: facts, database, topK, documents, results, perRequest }, null, 2)}\n`);
  }
}

async function apiProfiler(apiWranglerPid: number) {
  mkdirSync(flags.profile as string, { recursive: true });
  const port = inspectorPort(apiWranglerPid);
  if (!port) throw new Error('--profile: the API worker has no inspector port');
  return workerProfiler(port);
}

/** The isolate's CPU per request: the mean, and at concurrency 1 each request's, whole and by phase. */
function reportIsolateCpu(file: string, samples: Sample[], end: number, concurrency: number) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  log(`   API worker isolate CPU (profiled): ${(busyMs(profile) / samples.length).toFixed(1)} ms a request, mean`);
  const each = concurrency === 1 ? requestCpu(profile, samples, end) : null;
  if (concurrency === 1 && !each) log("   (the profile's clock does not match this process's: no per-request figure)");
  if (each) {
    const quantiles = (pick: (r: RequestCpu) => number) => {
      const sorted = each.map(pick).sort((a, b) => a - b);
      const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
      return `${at(0.5).toFixed(1)} / ${at(0.99).toFixed(1)}`;
    };
    log(`   API worker isolate CPU a request, p50 / p99 (ms): ${quantiles((r) => r.total)}`);
    log(
      `     before metadata ${quantiles((r) => r.beforeMetadata)}; metadata → done ${quantiles((r) => r.streaming)}; ` +
        `after done ${quantiles((r) => r.afterDone)}`,
    );
  }
  log(formatProfile(`API worker isolate (${file})`, readProfile(file), 20));
}

await main();
