/**
 * Query latency benchmark: `POST /query/` streamed as a client reads it, at several concurrencies, with
 * the time spent upstream (embedding, vector query, the model) taken out to leave the service's own
 * overhead. See docs/benchmarks.md, "Query latency".
 *
 *   npx tsx bench/query.ts [--delays 10,0] [--concurrency 1,32] [--requests 200,640] [--documents 64] [--top-k 5]
 *                          [--database pglite|postgres] [--out FILE]
 *
 * --delays       DEVSTACK_TOKEN_DELAY_MS values to run, a fresh stack each (the model's pause between words)
 * --concurrency  clients asking at once, each level after a warm-up of max(10, 2 × c) requests
 * --requests     measured requests per concurrency level (one number, or one per level)
 * --documents    PubMedQA abstracts ingested into the collection; their questions are asked (at least max(c))
 * --database     pglite (the devstack's default, one session for every connection) or postgres: a fresh
 *                database on the PostgreSQL server at TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test),
 *                dropped afterwards
 * --out          write every figure and every request's timings as JSON
 *
 * The model's requests go through a timing proxy (bench/timing-proxies.ts), and so do the API worker's
 * Postgres connections, so each request's model time is measured, not estimated.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { createTestDatabase } from '../test/support/real-postgres.ts';
import { type BenchStack, createCollection, ingestAll, signUp, startBenchStack, workerRuntimePid } from './ingest-e2e.ts';
import { type DbProxy, type ModelCall, type ModelProxy, overlap, startDbProxy, startModelProxy } from './timing-proxies.ts';

const { values: flags } = parseArgs({
  options: {
    delays: { type: 'string', default: '10,0' },
    concurrency: { type: 'string', default: '1,32' },
    requests: { type: 'string', default: '200,640' },
    documents: { type: 'string', default: '64' },
    'top-k': { type: 'string', default: '5' },
    database: { type: 'string', default: 'pglite' },
    out: { type: 'string' },
  },
});
const numbers = (text: string, name: string) => {
  const list = text.split(',').map((part) => Number(part.trim()));
  if (list.length === 0 || list.some((n) => !Number.isInteger(n) || n < 0))
    throw new Error(`--${name}: whole numbers, comma-separated`);
  return list;
};
const delays = numbers(flags.delays, 'delays');
const levels = numbers(flags.concurrency, 'concurrency');
const requestCounts = numbers(flags.requests, 'requests');
const documents = Number(flags.documents);
const topK = Number(flags['top-k']);
if (levels.some((c) => c < 1)) throw new Error('--concurrency: at least 1');
if (requestCounts.length !== 1 && requestCounts.length !== levels.length)
  throw new Error('--requests: one number or one per level');
if (!(documents >= Math.max(...levels))) throw new Error('--documents must be at least the highest concurrency');
if (!(topK >= 1 && topK <= 50)) throw new Error('--top-k must be 1–50');
const database = flags.database;
if (database !== 'pglite' && database !== 'postgres') throw new Error('--database: pglite or postgres');

const PUBMEDQA = new URL('../../shared/data/pubmedqa/pqal_dev.json', import.meta.url).pathname;
const log = (line = '') => console.log(line);

interface Question {
  question: string;
  /** The file whose abstract the question was written for. */
  file: string;
}

/** The first `count` PubMedQA questions, each with its abstract as a text file. */
function pubmedCorpus(count: number): { files: { name: string; bytes: Uint8Array }[]; questions: Question[] } {
  const entries = Object.entries(
    JSON.parse(readFileSync(PUBMEDQA, 'utf8')) as Record<string, { QUESTION: string; CONTEXTS: string[] }>,
  ).slice(0, count);
  if (entries.length < count) throw new Error(`PubMedQA has only ${entries.length} questions`);
  const encoder = new TextEncoder();
  return {
    files: entries.map(([id, entry]) => ({ name: `pubmedqa-${id}.txt`, bytes: encoder.encode(entry.CONTEXTS.join('\n\n')) })),
    questions: entries.map(([id, entry]) => ({
      question: entry.QUESTION.replace(/\s+/gu, ' ').trim(),
      file: `pubmedqa-${id}.txt`,
    })),
  };
}

interface QueryStack {
  bench: BenchStack;
  model: ModelProxy;
  db: DbProxy;
  stop(): Promise<void>;
}

/**
 * The stack of bench/ingest-e2e.ts with the API worker's model endpoint and database behind timing
 * proxies; with --database postgres, on a fresh database dropped afterwards.
 */
async function startQueryStack(): Promise<QueryStack> {
  let drop: (() => Promise<unknown>) | undefined;
  let databaseUrl: string | undefined;
  if (database === 'postgres') {
    const created = await createTestDatabase();
    if (!created) throw new Error('--database postgres: no PostgreSQL server answers at TEST_DATABASE_URL');
    ({ url: databaseUrl, drop } = created);
  }
  let proxies: { model: ModelProxy; db: DbProxy } | undefined;
  try {
    const bench = await startBenchStack({
      databaseUrl,
      beforeWorkers: async (stack) => {
        const model = await startModelProxy(new URL(stack.openaiBaseUrl).origin);
        const db = await startDbProxy(stack.databaseUrl).catch(async (error: unknown) => {
          await model.stop();
          throw error;
        });
        proxies = { model, db };
        return {
          vars: { api: { OPENAI_BASE_URL: `${model.url}${new URL(stack.openaiBaseUrl).pathname}` } },
          databaseUrls: { api: db.url },
          stop: async () => {
            await db.stop();
            await model.stop();
          },
        };
      },
    });
    const { model, db } = proxies as NonNullable<typeof proxies>;
    return {
      bench,
      model,
      db,
      stop: async () => {
        await bench.stop();
        await drop?.();
      },
    };
  } catch (error) {
    await drop?.().catch(() => {});
    throw error;
  }
}

/** One request as the client saw it; times are `performance.now()` of this process. */
interface Sample {
  question: Question;
  status: number;
  start: number;
  metadata: number | null;
  firstToken: number | null;
  done: number | null;
  end: number;
  tokens: number;
  answerChars: number;
  topSource: string | null;
  embeddingMs: number | null;
  retrievalMs: number | null;
  generationMs: number | null;
  reportedTtftMs: number | null;
  error: string | null;
}

async function ask(apiUrl: string, token: string, collectionId: string, question: Question): Promise<Sample> {
  const sample: Sample = {
    question,
    status: 0,
    start: performance.now(),
    metadata: null,
    firstToken: null,
    done: null,
    end: Number.NaN,
    tokens: 0,
    answerChars: 0,
    topSource: null,
    embeddingMs: null,
    retrievalMs: null,
    generationMs: null,
    reportedTtftMs: null,
    error: null,
  };
  try {
    const response = await fetch(`${apiUrl}/query/`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ question: question.question, collection_id: collectionId, top_k: topK }),
      signal: AbortSignal.timeout(120_000),
    });
    sample.status = response.status;
    if (!response.headers.get('content-type')?.startsWith('text/event-stream')) {
      sample.error = `${response.status} ${(await response.text()).slice(0, 300)}`;
      return sample;
    }
    const events = (response.body as ReadableStream<Uint8Array>)
      .pipeThrough(new TextDecoderStream() as unknown as TransformStream<Uint8Array, string>)
      .pipeThrough(new EventSourceParserStream())
      .getReader();
    for (let next = await events.read(); !next.done; next = await events.read()) {
      const event = next.value;
      const at = performance.now();
      const data = JSON.parse(event.data);
      if (event.event === 'metadata') {
        sample.metadata = at;
        sample.topSource = data.sources?.[0]?.source ?? null;
        sample.embeddingMs = data.embedding_latency_ms;
        sample.retrievalMs = data.retrieval_latency_ms;
      } else if (event.event === 'token') {
        sample.firstToken ??= at;
        sample.tokens++;
        sample.answerChars += String(data.token).length;
      } else if (event.event === 'done') {
        sample.done = at;
        sample.generationMs = data.generation_latency_ms;
        sample.reportedTtftMs = data.time_to_first_token_ms;
      } else if (event.event === 'error') {
        sample.error = `error event: ${event.data}`;
      }
    }
    if (sample.done === null && !sample.error) sample.error = 'the stream ended without a done event';
  } catch (error) {
    sample.error = error instanceof Error ? error.message : String(error);
  } finally {
    sample.end = performance.now();
  }
  return sample;
}

/**
 * `total` requests from `concurrency` clients, each asking only its own questions (client w asks
 * questions w, w + c, w + 2c, …), so no two requests in flight share a question and the model proxy's
 * calls can be matched to requests by their question.
 */
async function run(
  stack: QueryStack,
  token: string,
  collectionId: string,
  questions: Question[],
  concurrency: number,
  total: number,
): Promise<{ samples: Sample[]; wallMs: number }> {
  const samples: Sample[] = [];
  let issued = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, client) => {
      const own = questions.filter((_, index) => index % concurrency === client);
      for (let k = 0; issued < total; k++) {
        issued++;
        samples.push(await ask(stack.bench.apiUrl, token, collectionId, own[k % own.length] as Question));
      }
    }),
  );
  return { samples, wallMs: performance.now() - started };
}

interface Measured {
  sample: Sample;
  call: ModelCall;
  /** Client: request start → `done`. */
  e2e: number;
  clientTtft: number;
  /** Upstream model time as the proxy saw it: request in → last byte out. */
  modelMs: number;
  overhead: number;
  /** Before `metadata`: auth, body, access check, prompt, minus the reported embedding and retrieval. */
  preOverhead: number;
  /** `metadata` → `done` minus the model's time: the model call's set-up, the AI SDK, the SSE relay. */
  streamOverhead: number;
  /** Only at concurrency 1: time this request's own Postgres connections were waiting for the server. */
  dbMs: number | null;
  dbBeforeMetadataMs: number | null;
  /** The part of dbMs spent on connection start-up (to the first ReadyForQuery); Hyperdrive pools connections in production. */
  dbConnectMs: number | null;
}

function measure(samples: Sample[], calls: ModelCall[], db: DbProxy, concurrency: number): Measured[] {
  const byQuestion = new Map<string, ModelCall[]>();
  for (const call of calls) {
    if (call.question === null) continue;
    byQuestion.set(call.question, [...(byQuestion.get(call.question) ?? []), call]);
  }
  const measured: Measured[] = [];
  for (const sample of samples) {
    if (sample.error || sample.done === null || sample.metadata === null || sample.firstToken === null) continue;
    const call = (byQuestion.get(sample.question.question) ?? []).find((c) => c.start >= sample.start && c.end <= sample.end);
    if (!call) throw new Error(`no model call matches the request for "${sample.question.question}"`);
    const modelMs = call.end - call.start;
    const upstreamBefore = (sample.embeddingMs ?? 0) + (sample.retrievalMs ?? 0);
    const e2e = sample.done - sample.start;
    let dbMs: number | null = null;
    let dbBeforeMetadataMs: number | null = null;
    let dbConnectMs: number | null = null;
    if (concurrency === 1) {
      // One request at a time: the connections opened during it are its own (the recording of the
      // previous exchange runs on the previous request's connections).
      const own = db.connections.filter((c) => c.opened >= sample.start && c.opened <= (sample.done as number));
      dbMs = own.reduce((sum, c) => sum + overlap(c.busy, sample.start, sample.done as number), 0);
      dbBeforeMetadataMs = own.reduce((sum, c) => sum + overlap(c.busy, sample.start, sample.metadata as number), 0);
      dbConnectMs = own.reduce((sum, c) => sum + overlap(c.busy.slice(0, 1), sample.start, sample.done as number), 0);
    }
    measured.push({
      sample,
      call,
      e2e,
      clientTtft: sample.firstToken - sample.start,
      modelMs,
      overhead: e2e - upstreamBefore - modelMs,
      preOverhead: sample.metadata - sample.start - upstreamBefore,
      streamOverhead: sample.done - sample.metadata - modelMs,
      dbMs,
      dbBeforeMetadataMs,
      dbConnectMs,
    });
  }
  return measured;
}

/** CPU seconds used so far by a process and its descendants, by command name, from /proc. */
function treeCpu(rootPid: number, names: ReadonlyMap<number, string> = new Map()): Map<string, number> {
  const children = new Map<number, number[]>();
  const stats = new Map<number, { name: string; seconds: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // "pid (comm) state ppid … utime stime …": comm may hold spaces, so read around the last ')'.
      const close = stat.lastIndexOf(')');
      const fields = stat.slice(close + 2).split(' ');
      const ppid = Number(fields[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
      stats.set(Number(entry), {
        name: stat.slice(stat.indexOf('(') + 1, close),
        seconds: (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS,
      });
    } catch {
      // the process ended meanwhile
    }
  }
  const byName = new Map<string, number>();
  const queue = [rootPid];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    const stat = stats.get(pid);
    const name = names.get(pid) ?? stat?.name;
    if (stat && name) byName.set(name, (byName.get(name) ?? 0) + stat.seconds);
    queue.push(...(children.get(pid) ?? []));
  }
  return byName;
}

/** Linux's USER_HZ, which /proc/PID/stat counts CPU time in. */
const CLOCK_TICKS = 100;

interface CpuWindow {
  /** CPU milliseconds per measured request: this process (devstack, proxies, client) and the API worker's processes. */
  perRequestMs: Record<string, number>;
}

function cpuWindow(apiWranglerPid: number) {
  // wrangler dev runs two workerd processes: a proxy in front, and the runtime of the worker itself.
  const workerd = workerRuntimePid(apiWranglerPid);
  const names = new Map<number, string>(
    (workerd?.all ?? []).map((pid) => [pid, pid === workerd?.pid ? 'workerd (the worker)' : 'workerd (wrangler proxy)']),
  );
  const ownBefore = process.cpuUsage();
  const apiBefore = treeCpu(apiWranglerPid, names);
  return (requests: number): CpuWindow => {
    const own = process.cpuUsage(ownBefore);
    const perRequestMs: Record<string, number> = {
      'bench process (devstack, proxies, client)': (own.user + own.system) / 1000 / requests,
    };
    for (const [name, seconds] of treeCpu(apiWranglerPid, names)) {
      perRequestMs[`API worker: ${name}`] = ((seconds - (apiBefore.get(name) ?? 0)) * 1000) / requests;
    }
    return { perRequestMs };
  };
}

/** Round trips of `GET /health` through `wrangler dev`: the floor any request pays on this stack. */
async function httpFloor(apiUrl: string, count: number): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const response = await fetch(`${apiUrl}/health`);
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`GET /health: ${response.status}`);
    times.push(performance.now() - started);
  }
  return { p50: p50(times), p99: p99(times) };
}

/** Share of [from, to] during which at least one of the API worker's Postgres connections waited for the server. */
function dbBusyShare(db: DbProxy, from: number, to: number): number {
  const spans = db.connections
    .flatMap((c) => c.busy)
    .map(([start, end]): [number, number] => [Math.max(start, from), Math.min(end, to)])
    .filter(([start, end]) => end > start)
    .sort((a, b) => a[0] - b[0]);
  let covered = 0;
  let reach = from;
  for (const [start, end] of spans) {
    if (end <= reach) continue;
    covered += end - Math.max(start, reach);
    reach = end;
  }
  return covered / (to - from);
}

const percentile = (values: number[], p: number) => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
};
const p50 = (values: number[]) => percentile(values, 50);
const p99 = (values: number[]) => percentile(values, 99);
const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(1) : '–');

const pickOf = (measured: Measured[], f: (m: Measured) => number | null) =>
  measured.map(f).filter((v): v is number => v !== null);

function statsOf(measured: Measured[]) {
  const stat = (f: (m: Measured) => number | null) => {
    const values = pickOf(measured, f);
    return { p50: p50(values), p99: p99(values) };
  };
  return {
    clientTtft: stat((m) => m.clientTtft),
    reportedTtft: stat((m) => m.sample.reportedTtftMs),
    e2e: stat((m) => m.e2e),
    metadata: stat((m) => (m.sample.metadata as number) - m.sample.start),
    embedding: stat((m) => m.sample.embeddingMs),
    retrieval: stat((m) => m.sample.retrievalMs),
    model: stat((m) => m.modelMs),
    modelFirstContent: stat((m) => (m.call.firstContent === null ? null : m.call.firstContent - m.call.start)),
    generation: stat((m) => m.sample.generationMs),
    overhead: stat((m) => m.overhead),
    preOverhead: stat((m) => m.preOverhead),
    streamOverhead: stat((m) => m.streamOverhead),
    db: stat((m) => m.dbMs),
    dbBeforeMetadata: stat((m) => m.dbBeforeMetadataMs),
    dbConnect: stat((m) => m.dbConnectMs),
    overheadWithoutDb: stat((m) => (m.dbMs === null ? null : m.overhead - m.dbMs)),
  };
}

/** Medians of the differences between what `done` reports and what the client and the proxy measured. */
function differencesOf(measured: Measured[]) {
  const median = (f: (m: Measured) => number | null) => p50(pickOf(measured, f));
  return {
    // What the client waits for before the first token that the reported TTFT leaves out, by design.
    clientTtftMinusReported: median((m) => m.clientTtft - (m.sample.reportedTtftMs as number)),
    // Over the span the reported TTFT covers (after metadata): should be about zero.
    clientTtftAfterMetadataMinusReported: median(
      (m) => (m.sample.firstToken as number) - (m.sample.metadata as number) - (m.sample.reportedTtftMs as number),
    ),
    clientGenerationMinusReported: median(
      (m) => (m.sample.done as number) - (m.sample.metadata as number) - (m.sample.generationMs as number),
    ),
    reportedGenerationMinusModel: median((m) => (m.sample.generationMs as number) - m.modelMs),
    reportedTtftMinusModelFirstContent: median((m) =>
      m.call.firstContent === null ? null : (m.sample.reportedTtftMs as number) - (m.call.firstContent - m.call.start),
    ),
  };
}

interface LevelResult {
  database: string;
  delayMs: number;
  concurrency: number;
  requests: number;
  errors: number;
  errorExamples: string[];
  wallS: number;
  throughput: number;
  loadavgBefore: number[];
  loadavgAfter: number[];
  topSourceHitRate: number;
  tokensP50: number;
  healthFloor: { p50: number; p99: number };
  dbBusyShare: number;
  cpu: CpuWindow;
  stats: ReturnType<typeof statsOf>;
  differences: ReturnType<typeof differencesOf>;
}

function summarize(
  delayMs: number,
  concurrency: number,
  samples: Sample[],
  measured: Measured[],
  wallMs: number,
  load: [number[], number[]],
  extra: { healthFloor: { p50: number; p99: number }; dbBusyShare: number; cpu: CpuWindow },
): LevelResult {
  const failed = samples.filter((s) => s.error);
  return {
    database,
    delayMs,
    concurrency,
    requests: samples.length,
    errors: failed.length,
    errorExamples: [...new Set(failed.map((s) => s.error as string))].slice(0, 3),
    wallS: wallMs / 1000,
    throughput: samples.length / (wallMs / 1000),
    loadavgBefore: load[0],
    loadavgAfter: load[1],
    topSourceHitRate: measured.filter((m) => m.sample.topSource === m.sample.question.file).length / Math.max(1, measured.length),
    tokensP50: p50(measured.map((m) => m.sample.tokens)),
    ...extra,
    stats: statsOf(measured),
    differences: differencesOf(measured),
  };
}

function report(result: LevelResult) {
  const { stats: s, differences: d } = result;
  log(
    `\n== DEVSTACK_TOKEN_DELAY_MS=${result.delayMs}, ${result.database}, concurrency ${result.concurrency}: ${result.requests} requests, ` +
      `${result.errors} errors, ${result.wallS.toFixed(1)} s, ${result.throughput.toFixed(1)} req/s, ` +
      `load ${result.loadavgBefore.map((l) => l.toFixed(2)).join(' ')} → ${result.loadavgAfter.map((l) => l.toFixed(2)).join(' ')}`,
  );
  for (const example of result.errorExamples) log(`   error: ${example}`);
  log(
    `   top source is the question's abstract: ${(result.topSourceHitRate * 100).toFixed(1)} %; tokens per answer p50 ${result.tokensP50}`,
  );
  log(`   GET /health round trip (before the level): ${ms(result.healthFloor.p50)} / ${ms(result.healthFloor.p99)} ms`);
  log(`   Postgres busy (any API connection waiting): ${(result.dbBusyShare * 100).toFixed(1)} % of the wall time`);
  log(
    `   CPU per request: ${Object.entries(result.cpu.perRequestMs)
      .map(([name, value]) => `${name} ${value.toFixed(1)} ms`)
      .join('; ')}`,
  );
  log('   figure (ms)                                  p50 / p99');
  const rows: [string, { p50: number; p99: number }][] = [
    ['client TTFT (start → first token)', s.clientTtft],
    ['reported time_to_first_token_ms', s.reportedTtft],
    ['end to end (start → done)', s.e2e],
    ['start → metadata', s.metadata],
    ['reported embedding_latency_ms', s.embedding],
    ['reported retrieval_latency_ms', s.retrieval],
    ['model call (proxy)', s.model],
    ['model call → first content (proxy)', s.modelFirstContent],
    ['reported generation_latency_ms', s.generation],
    ['service overhead', s.overhead],
    ['  before metadata', s.preOverhead],
    ['  metadata → done', s.streamOverhead],
  ];
  if (result.concurrency === 1) {
    rows.push(
      ['Postgres wait (own connections)', s.db],
      ['  before metadata', s.dbBeforeMetadata],
      ['  connection start-up', s.dbConnect],
      ['service overhead without Postgres', s.overheadWithoutDb],
    );
  }
  for (const [name, value] of rows) log(`   ${name.padEnd(44)} ${ms(value.p50)} / ${ms(value.p99)}`);
  log('   median differences (ms):');
  for (const [name, value] of Object.entries(d)) log(`     ${name.padEnd(42)} ${ms(value)}`);
}

async function main() {
  const corpus = pubmedCorpus(documents);
  const machine = {
    cpus: cpus().length,
    model: cpus()[0]?.model ?? 'unknown',
    memGiB: totalmem() / 2 ** 30,
    node: process.version,
  };
  log(`machine: ${machine.cpus} CPUs (${machine.model}), ${machine.memGiB.toFixed(1)} GiB, Node ${machine.node}`);
  log(
    `load average at start: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const results: LevelResult[] = [];
  const perRequest: unknown[] = [];
  const benchStarted = performance.now();

  for (const delay of delays) {
    process.env.DEVSTACK_TOKEN_DELAY_MS = String(delay);
    const started = performance.now();
    const stack = await startQueryStack();
    try {
      log(
        `\nDEVSTACK_TOKEN_DELAY_MS=${delay}, database ${database}: stack up in ${((performance.now() - started) / 1000).toFixed(1)} s; embeddings: ${stack.bench.embeddings}`,
      );
      const token = await signUp(stack.bench);
      const collectionId = await createCollection(stack.bench, token, 'query-bench');
      const ingested = await ingestAll(stack.bench, token, collectionId, corpus.files);
      const bad = ingested.files.filter((f) => f.job.status !== 'succeeded');
      if (bad.length > 0)
        throw new Error(`ingestion failed: ${bad.map((f) => `${f.name} ${f.job.status} ${f.job.error_message}`)}`);
      const chunks = ingested.files.reduce((sum, f) => sum + f.job.chunks_total, 0);
      log(`ingested ${ingested.files.length} abstracts (${chunks} chunks) in ${(ingested.wallMs / 1000).toFixed(1)} s`);

      for (const [index, concurrency] of levels.entries()) {
        const total = (requestCounts.length === 1 ? requestCounts[0] : requestCounts[index]) as number;
        const warm = await run(stack, token, collectionId, corpus.questions, concurrency, Math.max(10, 2 * concurrency));
        const warmErrors = warm.samples.filter((s) => s.error);
        if (warmErrors.length > 0) throw new Error(`warm-up failed: ${warmErrors[0]?.error}`);
        const healthFloor = await httpFloor(stack.bench.apiUrl, 50);
        const before = loadavg();
        const cpu = cpuWindow(stack.bench.apiWranglerPid);
        const windowStart = performance.now();
        const { samples, wallMs } = await run(stack, token, collectionId, corpus.questions, concurrency, total);
        const extra = {
          healthFloor,
          cpu: cpu(samples.length),
          dbBusyShare: dbBusyShare(stack.db, windowStart, performance.now()),
        };
        const after = loadavg();
        const measured = measure(samples, stack.model.calls, stack.db, concurrency);
        const result = summarize(delay, concurrency, samples, measured, wallMs, [before, after], extra);
        results.push(result);
        report(result);
        perRequest.push(
          ...measured.map((m) => ({
            delayMs: delay,
            concurrency,
            start: m.sample.start,
            e2e: m.e2e,
            clientTtft: m.clientTtft,
            metadata: (m.sample.metadata as number) - m.sample.start,
            embeddingMs: m.sample.embeddingMs,
            retrievalMs: m.sample.retrievalMs,
            modelMs: m.modelMs,
            generationMs: m.sample.generationMs,
            reportedTtftMs: m.sample.reportedTtftMs,
            overhead: m.overhead,
            preOverhead: m.preOverhead,
            streamOverhead: m.streamOverhead,
            dbMs: m.dbMs,
            dbConnectMs: m.dbConnectMs,
            tokens: m.sample.tokens,
          })),
        );
      }
      const unparsed = stack.db.connections.filter((c) => !c.parsed).length;
      if (unparsed > 0)
        log(`warning: ${unparsed} Postgres connections could not be followed (TLS); Postgres figures are incomplete`);
    } finally {
      await stack.stop();
    }
  }
  log(
    `\nbench wall time ${((performance.now() - benchStarted) / 1000).toFixed(0)} s; load average at end: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  if (flags.out)
    writeFileSync(flags.out, `${JSON.stringify({ machine, database, topK, documents, results, perRequest }, null, 2)}\n`);
}

await main();
