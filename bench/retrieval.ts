/**
 * Retrieval quality on BEIR SciFact, end to end: every abstract is uploaded through `POST /ingest/`
 * (QStash, the ingest worker, Upstash Vector: the devstack and both workers, as bench/ingest.ts runs
 * them), then every training query is asked through `POST /query/search` and scored with BEIR's nDCG@10
 * and recall@50. See docs/benchmarks.md, "Retrieval (BEIR SciFact)".
 *
 *   npx tsx bench/retrieval.ts [--limit-docs N] [--limit-queries N] [--backends sparse,hybrid]
 *     [--strategies similarity,mmr] [--chunk-size 8000] [--upload-concurrency 8] [--max-pending 64]
 *     [--query-concurrency 8] [--data DIR] [--out results.json]
 *
 * --backends     sparse: BM25 alone (the devstack started with its embedding model switched off);
 *                hybrid: dense + sparse fused, which needs an embedding model in the devstack
 *                (DEVSTACK_EMBEDDING_MODEL, or one under shared/models). Without one, hybrid is reported
 *                as not available and the stack that was started serves the sparse run.
 * --strategies   the collection's retrieval_strategy for each pass over the queries (PUT config between passes)
 * --limit-docs   quick runs: the documents judged relevant for the chosen queries, then others in corpus order
 * --limit-queries  quick runs: the first N training queries of qrels/train.tsv
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type BenchStack, createCollection, type Job, startBenchStack } from './ingest-e2e.ts';
import { documentRanking, mean, ndcgAtK, parseQrels, percentile, type Qrels, recallAtK } from './retrieval-metrics.ts';

const BACKENDS = ['sparse', 'hybrid'] as const;
const STRATEGIES = ['similarity', 'mmr', 'threshold'] as const;
type Backend = (typeof BACKENDS)[number];
type Strategy = (typeof STRATEGIES)[number];

/** Bad flags end the run with a message, not a stack trace. */
function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

const OPTIONS = {
  data: { type: 'string', default: new URL('../../shared/data/scifact', import.meta.url).pathname },
  'limit-docs': { type: 'string' },
  'limit-queries': { type: 'string' },
  backends: { type: 'string', default: 'sparse,hybrid' },
  strategies: { type: 'string', default: 'similarity,mmr' },
  'chunk-size': { type: 'string', default: '8000' },
  'top-k': { type: 'string', default: '50' },
  'upload-concurrency': { type: 'string', default: '8' },
  'max-pending': { type: 'string', default: '64' },
  'query-concurrency': { type: 'string', default: '8' },
  'poll-ms': { type: 'string', default: '250' },
  'timeout-min': { type: 'string', default: '90' },
  'latency-queries': { type: 'string', default: '200' },
  out: { type: 'string' },
} as const;

const { values: flags } = (() => {
  try {
    return parseArgs({ options: OPTIONS });
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
})();

function whole(name: string, text: string | undefined, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max) fail(`--${name} must be a whole number ${min}–${max}`);
  return value;
}
function list<T extends string>(name: string, text: string, allowed: readonly T[]): T[] {
  const items = text.split(',').map((item) => item.trim());
  const bad = items.filter((item) => !allowed.includes(item as T));
  if (bad.length > 0 || items.length === 0) fail(`--${name}: ${bad.join(', ')} not one of ${allowed.join(', ')}`);
  return [...new Set(items)] as T[];
}

const limitDocs = flags['limit-docs'] === undefined ? undefined : whole('limit-docs', flags['limit-docs'], 1);
const limitQueries = flags['limit-queries'] === undefined ? undefined : whole('limit-queries', flags['limit-queries'], 1);
const backends = list('backends', flags.backends, BACKENDS);
const strategies = list('strategies', flags.strategies, STRATEGIES);
const chunkSize = whole('chunk-size', flags['chunk-size'], 100, 8000);
const topK = whole('top-k', flags['top-k'], 10, 50);
const uploadConcurrency = whole('upload-concurrency', flags['upload-concurrency'], 1, 64);
const maxPending = Math.max(uploadConcurrency, whole('max-pending', flags['max-pending'], 1, 10_000));
const queryConcurrency = whole('query-concurrency', flags['query-concurrency'], 1, 64);
const pollMs = whole('poll-ms', flags['poll-ms'], 10, 10_000);
const timeoutMs = whole('timeout-min', flags['timeout-min'], 1, 24 * 60) * 60_000;
const latencyQueries = whole('latency-queries', flags['latency-queries'], 0);

const log = (line = '') => console.log(line);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const fixed = (n: number, digits = 4) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
const ms = (latency: { p50: number; p99: number }) => `${latency.p50.toFixed(1)} / ${latency.p99.toFixed(1)} ms`;

// ---------------------------------------------------------------------------------------------
// Data

interface Doc {
  id: string;
  title: string;
  text: string;
}

function readJsonl<T>(path: string): T[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, i) => {
      try {
        return JSON.parse(line) as T;
      } catch {
        throw new Error(`${path} line ${i + 1} is not JSON`);
      }
    });
}

function loadData(dir: string) {
  const corpus = readJsonl<{ _id: string; title?: string; text?: string }>(join(dir, 'corpus.jsonl')).map(
    (d): Doc => ({ id: String(d._id), title: d.title ?? '', text: d.text ?? '' }),
  );
  const queryText = new Map(
    readJsonl<{ _id: string; text: string }>(join(dir, 'queries.jsonl')).map((q) => [String(q._id), q.text]),
  );
  const allQrels = parseQrels(readFileSync(join(dir, 'qrels', 'train.tsv'), 'utf8'));

  const queryIds = [...allQrels.keys()].slice(0, limitQueries);
  const missing = queryIds.filter((id) => !queryText.get(id)?.trim());
  if (missing.length > 0)
    throw new Error(`queries.jsonl has no text for ${missing.length} judged queries (${missing.slice(0, 5)})`);
  const qrels: Qrels = new Map(queryIds.map((id) => [id, allQrels.get(id) as Map<string, number>]));

  let docs = corpus;
  if (limitDocs !== undefined) {
    const relevant = new Set([...qrels.values()].flatMap((judged) => [...judged.keys()]));
    const judgedDocs = corpus.filter((d) => relevant.has(d.id));
    const others = corpus.filter((d) => !relevant.has(d.id)).slice(0, Math.max(0, limitDocs - judgedDocs.length));
    docs = [...judgedDocs, ...others];
    if (judgedDocs.length > limitDocs)
      log(`note: all ${judgedDocs.length} judged documents kept, above --limit-docs ${limitDocs}`);
  }
  const ids = new Set(corpus.map((d) => d.id));
  const unknown = [...qrels.values()].flatMap((judged) => [...judged.keys()]).filter((id) => !ids.has(id));
  if (unknown.length > 0) throw new Error(`qrels name ${unknown.length} documents not in the corpus (${unknown.slice(0, 5)})`);
  return { docs, corpusSize: corpus.length, queries: queryIds.map((id) => ({ id, text: queryText.get(id) as string })), qrels };
}

// One abstract per file: the title as its first line, then the abstract; the file name carries the corpus id.
const FILE_SUFFIX = '.txt';
const fileName = (doc: Doc) => `${doc.id}${FILE_SUFFIX}`;
const docIdOf = (source: string) => (source.endsWith(FILE_SUFFIX) ? source.slice(0, -FILE_SUFFIX.length) : source);
const encoder = new TextEncoder();

// ---------------------------------------------------------------------------------------------
// A user of the stack: an admin (PUT config is admin only), made so through the auth admin API.

class User {
  token = '';
  readonly email = `bench-retrieval-${crypto.randomUUID().slice(0, 8)}@example.com`;
  private readonly password = 'correct horse battery';

  constructor(
    private readonly stack: BenchStack,
    private readonly serviceRoleKey: string,
  ) {}

  async signUpAsAdmin(): Promise<void> {
    const response = await fetch(`${this.stack.supabaseUrl}/auth/v1/signup`, {
      method: 'POST',
      headers: { apikey: this.stack.anonKey, 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: this.email, password: this.password }),
    });
    const body = (await response.json()) as { user?: { id?: string } };
    const id = body.user?.id;
    if (!response.ok || !id) throw new Error(`sign-up failed: ${response.status} ${JSON.stringify(body)}`);
    const update = await fetch(`${this.stack.supabaseUrl}/auth/v1/admin/users/${id}`, {
      method: 'PUT',
      headers: {
        apikey: this.serviceRoleKey,
        Authorization: `Bearer ${this.serviceRoleKey}`,
        'Content-Type': 'application/json',
      },
      body: JSON.stringify({ app_metadata: { is_admin: true } }),
    });
    if (!update.ok) throw new Error(`making the bench user admin failed: ${update.status} ${await update.text()}`);
    await this.signIn();
  }

  /** A fresh token that carries is_admin; also how a long run outlives the token's hour. */
  async signIn(): Promise<void> {
    const response = await fetch(`${this.stack.supabaseUrl}/auth/v1/token?grant_type=password`, {
      method: 'POST',
      headers: { apikey: this.stack.anonKey, 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: this.email, password: this.password }),
    });
    const body = (await response.json()) as { access_token?: string };
    if (!response.ok || !body.access_token) throw new Error(`sign-in failed: ${response.status} ${JSON.stringify(body)}`);
    this.token = body.access_token;
  }

  /** A call to the API; a 401 (the token expired mid-run) signs in again and retries once. */
  async call(path: string, init: { method: string; json?: unknown; form?: () => FormData }): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = { Authorization: `Bearer ${this.token}` };
      let body: BodyInit | undefined;
      if (init.json !== undefined) {
        headers['Content-Type'] = 'application/json';
        body = JSON.stringify(init.json);
      } else if (init.form) {
        body = init.form();
      }
      const response = await fetch(`${this.stack.apiUrl}${path}`, { method: init.method, headers, body });
      if (response.status !== 401 || attempt > 0) return response;
      await response.body?.cancel();
      await this.signIn();
    }
  }
}

async function putConfig(user: User, collectionId: string, strategy: Strategy): Promise<void> {
  const response = await user.call(`/collections/${collectionId}/config`, {
    method: 'PUT',
    json: { chunk_size: chunkSize, retrieval_strategy: strategy },
  });
  if (!response.ok) throw new Error(`PUT config failed: ${response.status} ${await response.text()}`);
}

// ---------------------------------------------------------------------------------------------
// Ingestion: uploads with a few in flight, no more than maxPending jobs unfinished, one poller.

interface IngestResult {
  wallMs: number;
  jobs: Map<string, Job>;
  uploadRetries: number;
}

const TERMINAL = new Set(['succeeded', 'partial', 'failed']);

async function ingestCorpus(user: User, collectionId: string, docs: readonly Doc[]): Promise<IngestResult> {
  const started = performance.now();
  const deadline = Date.now() + timeoutMs;
  const pending = new Map<string, string>(); // job id → doc id
  const jobs = new Map<string, Job>(); // doc id → terminal job
  let next = 0;
  let uploadRetries = 0;
  let uploading = true;
  // The first failure on either side stops the other, so a broken run ends promptly.
  let failure: { error: unknown } | undefined;

  const upload = async (doc: Doc): Promise<string> => {
    const bytes = encoder.encode(`${doc.title}\n\n${doc.text}\n`);
    for (let attempt = 0; ; attempt++) {
      const response = await user.call(`/ingest/?collection_id=${collectionId}`, {
        method: 'POST',
        form: () => {
          const form = new FormData();
          form.append('file', new Blob([bytes], { type: 'text/plain' }), fileName(doc));
          return form;
        },
      });
      const body = (await response.json().catch(() => ({}))) as { job_id?: string };
      if (response.ok && body.job_id) return body.job_id;
      // A stack this busy can answer 5xx now and then; anything else is a real refusal.
      if (response.status < 500 || attempt >= 3) {
        throw new Error(`upload of ${fileName(doc)} failed: ${response.status} ${JSON.stringify(body)}`);
      }
      uploadRetries++;
      await sleep(500 * 2 ** attempt);
    }
  };

  const uploader = async () => {
    while (next < docs.length && !failure) {
      if (Date.now() > deadline) throw new Error('ingestion did not finish in time (--timeout-min)');
      if (pending.size >= maxPending) {
        await sleep(20);
        continue;
      }
      const doc = docs[next++] as Doc;
      pending.set(await upload(doc), doc.id);
    }
  };

  let lastReport = performance.now();
  const poller = async () => {
    while ((uploading || pending.size > 0) && !failure) {
      if (Date.now() > deadline) throw new Error(`ingestion did not finish in time: ${pending.size} jobs unfinished`);
      await pool([...pending], queryConcurrency, async ([jobId, docId]) => {
        const response = await user.call(`/ingest/jobs/${jobId}`, { method: 'GET' });
        if (!response.ok) throw new Error(`GET /ingest/jobs/${jobId}: ${response.status} ${await response.text()}`);
        const job = (await response.json()) as Job;
        if (!TERMINAL.has(job.status)) return;
        jobs.set(docId, job);
        pending.delete(jobId);
      });
      if (performance.now() - lastReport > 15_000) {
        lastReport = performance.now();
        const seconds = (lastReport - started) / 1000;
        log(`  ${jobs.size}/${docs.length} ingested in ${seconds.toFixed(0)} s (${(jobs.size / seconds).toFixed(1)} docs/s)`);
      }
      await sleep(pollMs);
    }
  };

  const stop = (error: unknown) => {
    failure ??= { error };
  };
  const polling = poller().catch(stop);
  await Promise.all(Array.from({ length: uploadConcurrency }, () => uploader().catch(stop)));
  uploading = false;
  await polling;
  if (failure) throw failure.error;
  return { wallMs: performance.now() - started, jobs, uploadRetries };
}

/** Runs `work` over the items with at most `limit` at once; the first failure rejects (after the others settle). */
async function pool<T>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const errors: unknown[] = [];
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length && errors.length === 0) {
        const index = next++;
        await work(items[index] as T, index).catch((error: unknown) => errors.push(error));
      }
    }),
  );
  if (errors.length > 0) throw errors[0];
}

// ---------------------------------------------------------------------------------------------
// Queries

interface SearchResponse {
  sources: { source: string; chunk_index: number; score: number }[];
  embedding_latency_ms: number;
  retrieval_latency_ms: number;
}

interface StrategyRun {
  backend: Backend;
  strategy: Strategy;
  queries: number;
  ndcg10: number;
  recall50: number;
  /** Queries whose answer held no source. */
  empty: number;
  /** Sources whose name maps to no uploaded document. */
  unknownSources: number;
  /** Mean distinct documents per answer (top_k chunks, deduplicated). */
  meanDocs: number;
  /** Client wall time per request with queryConcurrency requests in flight (queueing included). */
  latencyMs: { p50: number; p90: number; p99: number; mean: number };
  /** Client wall time per request one at a time, over the first latencyQueries queries; null when 0. */
  sequentialLatencyMs: { queries: number; p50: number; p90: number; p99: number; mean: number } | null;
  serverRetrievalMs: { p50: number; p99: number };
  serverEmbeddingMs: { p50: number; p99: number };
  wallMs: number;
  perQuery: { id: string; ndcg10: number; recall50: number; ranked: string[] }[];
}

async function runQueries(
  user: User,
  collectionId: string,
  backend: Backend,
  strategy: Strategy,
  data: ReturnType<typeof loadData>,
  uploaded: ReadonlySet<string>,
): Promise<StrategyRun> {
  await user.signIn();
  await putConfig(user, collectionId, strategy);
  const results: StrategyRun['perQuery'] = new Array(data.queries.length);
  const latencies: number[] = [];
  const retrieval: number[] = [];
  const embedding: number[] = [];
  let empty = 0;
  let unknownSources = 0;
  let docsReturned = 0;
  const started = performance.now();
  await pool(data.queries, queryConcurrency, async (query, index) => {
    const sent = performance.now();
    const response = await user.call('/query/search', {
      method: 'POST',
      json: { question: query.text, collection_id: collectionId, top_k: topK },
    });
    const text = await response.text();
    const elapsed = performance.now() - sent;
    if (!response.ok) throw new Error(`search for query ${query.id} failed: ${response.status} ${text.slice(0, 500)}`);
    const body = JSON.parse(text) as SearchResponse;
    latencies.push(elapsed);
    retrieval.push(body.retrieval_latency_ms);
    embedding.push(body.embedding_latency_ms);
    if (body.sources.length === 0) empty++;
    unknownSources += body.sources.filter((s) => !uploaded.has(docIdOf(s.source))).length;
    const ranked = documentRanking(body.sources, docIdOf);
    docsReturned += ranked.length;
    const judged = data.qrels.get(query.id) as Map<string, number>;
    results[index] = { id: query.id, ndcg10: ndcgAtK(ranked, judged, 10), recall50: recallAtK(ranked, judged, 50), ranked };
  });
  const sequential = await timeOneByOne(user, collectionId, data.queries.slice(0, latencyQueries));
  return {
    backend,
    strategy,
    queries: results.length,
    ndcg10: mean(results.map((r) => r.ndcg10)),
    recall50: mean(results.map((r) => r.recall50)),
    empty,
    unknownSources,
    meanDocs: docsReturned / results.length,
    latencyMs: summarise(latencies),
    sequentialLatencyMs: sequential.length === 0 ? null : { queries: sequential.length, ...summarise(sequential) },
    serverRetrievalMs: { p50: percentile(retrieval, 50), p99: percentile(retrieval, 99) },
    serverEmbeddingMs: { p50: percentile(embedding, 50), p99: percentile(embedding, 99) },
    wallMs: performance.now() - started,
    perQuery: results,
  };
}

const summarise = (values: number[]) => ({
  p50: percentile(values, 50),
  p90: percentile(values, 90),
  p99: percentile(values, 99),
  mean: mean(values),
});

/** Latency without queueing behind the bench's own requests: the same searches, one at a time. */
async function timeOneByOne(user: User, collectionId: string, queries: readonly { id: string; text: string }[]) {
  const latencies: number[] = [];
  for (const query of queries) {
    const sent = performance.now();
    const response = await user.call('/query/search', {
      method: 'POST',
      json: { question: query.text, collection_id: collectionId, top_k: topK },
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`search for query ${query.id} failed: ${response.status} ${text.slice(0, 500)}`);
    latencies.push(performance.now() - sent);
  }
  return latencies;
}

// ---------------------------------------------------------------------------------------------
// One stack per backend

interface BackendRun {
  backend: Backend;
  embeddings: string;
  ingest: {
    docs: number;
    wallMs: number;
    docsPerSecond: number;
    statuses: Record<string, number>;
    chunks: number;
    multiChunkDocs: { id: string; chunks: number; chars: number }[];
    zeroChunkDocs: string[];
    failures: { id: string; status: string; error: string | null }[];
    uploadRetries: number;
  };
  runs: StrategyRun[];
}

async function runBackend(stack: BenchStack, backend: Backend, serviceRoleKey: string, data: ReturnType<typeof loadData>) {
  const user = new User(stack, serviceRoleKey);
  await user.signUpAsAdmin();
  const collectionId = await createCollection(stack, user.token, `scifact-${backend}`);
  await putConfig(user, collectionId, 'similarity');

  log(`[${backend}] ingesting ${data.docs.length} abstracts (chunk_size ${chunkSize}, ${uploadConcurrency} uploads in flight)`);
  const ingested = await ingestCorpus(user, collectionId, data.docs);
  const byId = new Map(data.docs.map((d) => [d.id, d]));
  const statuses: Record<string, number> = {};
  const failures: BackendRun['ingest']['failures'] = [];
  const multiChunkDocs: BackendRun['ingest']['multiChunkDocs'] = [];
  const zeroChunkDocs: string[] = [];
  let chunks = 0;
  for (const [id, job] of ingested.jobs) {
    statuses[job.status] = (statuses[job.status] ?? 0) + 1;
    chunks += job.chunks_total;
    if (job.status !== 'succeeded') failures.push({ id, status: job.status, error: job.error_message });
    const doc = byId.get(id) as Doc;
    if (job.chunks_total > 1)
      multiChunkDocs.push({ id, chunks: job.chunks_total, chars: doc.title.length + 2 + doc.text.length });
    if (job.chunks_total === 0) zeroChunkDocs.push(id);
  }
  const ingest: BackendRun['ingest'] = {
    docs: data.docs.length,
    wallMs: ingested.wallMs,
    docsPerSecond: data.docs.length / (ingested.wallMs / 1000),
    statuses,
    chunks,
    multiChunkDocs,
    zeroChunkDocs,
    failures,
    uploadRetries: ingested.uploadRetries,
  };
  log(
    `[${backend}] ingested in ${(ingested.wallMs / 1000).toFixed(1)} s (${ingest.docsPerSecond.toFixed(1)} docs/s): ` +
      `${JSON.stringify(statuses)}, ${chunks} chunks, ${multiChunkDocs.length} documents in more than one chunk`,
  );
  for (const failure of failures.slice(0, 10)) log(`  ${failure.id}: ${failure.status} ${failure.error ?? ''}`);

  const uploaded = new Set(data.docs.map((d) => d.id));
  const runs: StrategyRun[] = [];
  for (const strategy of strategies) {
    log(`[${backend}] ${data.queries.length} queries, strategy ${strategy}, top_k ${topK}, ${queryConcurrency} in flight`);
    const run = await runQueries(user, collectionId, backend, strategy, data, uploaded);
    log(
      `[${backend}/${strategy}] nDCG@10 ${fixed(run.ndcg10)}  recall@50 ${fixed(run.recall50)}  ` +
        `latency p50/p99 ${ms(run.latencyMs)}  ` +
        (run.sequentialLatencyMs ? `one at a time ${ms(run.sequentialLatencyMs)}  ` : '') +
        `(${(run.wallMs / 1000).toFixed(1)} s, ${run.empty} empty, ${run.unknownSources} unknown sources)`,
    );
    runs.push(run);
  }
  return { backend, embeddings: stack.embeddings, ingest, runs } satisfies BackendRun;
}

const hasModel = (stack: BenchStack) => !stack.embeddings.startsWith('none');

/**
 * Starts the stack. `sparseOnly` names an embedding model the devstack cannot resolve (neither a directory
 * nor a hub id), which it answers by serving sparse vectors only: the way to get BM25 alone on a
 * machine that has a model.
 */
async function startStack(sparseOnly: boolean): Promise<BenchStack> {
  const saved = process.env.DEVSTACK_EMBEDDING_MODEL;
  if (sparseOnly) process.env.DEVSTACK_EMBEDDING_MODEL = 'off';
  try {
    return await startBenchStack();
  } finally {
    if (saved === undefined) delete process.env.DEVSTACK_EMBEDDING_MODEL;
    else process.env.DEVSTACK_EMBEDDING_MODEL = saved;
  }
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const data = loadData(flags.data);
  // The devstack takes its service-role key from here when set; the bench needs it for the admin API.
  process.env.DEVSTACK_SERVICE_ROLE_KEY ??= `sb_secret_bench_${crypto.randomUUID().replaceAll('-', '')}`;
  const serviceRoleKey = process.env.DEVSTACK_SERVICE_ROLE_KEY;

  const machine = {
    nproc: availableParallelism(),
    cpu: cpus()[0]?.model ?? 'unknown',
    memGiB: Number((totalmem() / 2 ** 30).toFixed(1)),
    node: process.version,
    loadavgStart: loadavg().map((n) => Number(n.toFixed(2))),
  };
  log(
    `machine: ${machine.nproc} cores, ${machine.cpu}, ${machine.memGiB} GiB, Node ${machine.node}, load ${machine.loadavgStart}`,
  );
  log(
    `data: ${data.docs.length} of ${data.corpusSize} documents, ${data.queries.length} training queries, ` +
      `${[...data.qrels.values()].reduce((n, j) => n + j.size, 0)} judgements`,
  );

  const results: BackendRun[] = [];
  const unavailable: Record<string, string> = {};
  const todo = new Set(backends);
  const benchStarted = performance.now();

  if (todo.has('hybrid')) {
    const stack = await startStack(false);
    try {
      log(`stack up: embeddings ${stack.embeddings}`);
      if (hasModel(stack)) {
        results.push(await runBackend(stack, 'hybrid', serviceRoleKey, data));
      } else {
        unavailable.hybrid = 'not available here (no embedding model in the devstack)';
        log(`hybrid: ${unavailable.hybrid}`);
        // This stack is sparse-only already: it serves the sparse run.
        if (todo.has('sparse')) {
          results.push(await runBackend(stack, 'sparse', serviceRoleKey, data));
          todo.delete('sparse');
        }
      }
    } finally {
      await stack.stop();
    }
    todo.delete('hybrid');
  }
  if (todo.has('sparse')) {
    const stack = await startStack(true);
    try {
      log(`stack up: embeddings ${stack.embeddings}`);
      if (hasModel(stack)) throw new Error(`the sparse-only stack still has embeddings: ${stack.embeddings}`);
      results.push(await runBackend(stack, 'sparse', serviceRoleKey, data));
    } finally {
      await stack.stop();
    }
  }

  const wallMs = performance.now() - benchStarted;
  log();
  log(
    `| backend | strategy | nDCG@10 | recall@50 | p50 / p99, ${queryConcurrency} in flight | p50 / p99, one at a time | queries |`,
  );
  log(`|---|---|---:|---:|---:|---:|---:|`);
  for (const backend of results) {
    for (const run of backend.runs) {
      log(
        `| ${run.backend} | ${run.strategy} | ${fixed(run.ndcg10)} | ${fixed(run.recall50)} | ` +
          `${ms(run.latencyMs)} | ${run.sequentialLatencyMs ? ms(run.sequentialLatencyMs) : '—'} | ${run.queries} |`,
      );
    }
  }
  for (const [backend, reason] of Object.entries(unavailable)) log(`| ${backend} | — | ${reason} | | | | |`);
  log(`bench wall time ${(wallMs / 1000).toFixed(0)} s; load average at the end ${loadavg().map((n) => n.toFixed(2))}`);

  if (flags.out) {
    const report = {
      command: process.argv.slice(1).join(' '),
      machine: { ...machine, loadavgEnd: loadavg().map((n) => Number(n.toFixed(2))) },
      settings: { chunkSize, topK, uploadConcurrency, maxPending, queryConcurrency, latencyQueries, limitDocs, limitQueries },
      docs: data.docs.length,
      queries: data.queries.length,
      unavailable,
      results,
      wallMs,
    };
    writeFileSync(flags.out, `${JSON.stringify(report, null, 1)}\n`);
    log(`wrote ${flags.out}`);
  }
}

await main();
