/**
 * Long real documents: twelve SEC 10-Q reports of three companies (bench/long-documents/manifest.json), each
 * uploaded through `POST /ingest/` on the local stack (devstack and both workers, as bench/ingest/ingest.ts runs them),
 * then every question of bench/long-documents/questions.json asked through `POST /query/search` (top_k 5).
 * Scored per question: the report it names is among the 5 sources (doc@5), and one of those 5, from that
 * report, holds the figure that answers it (figure@5). See docs/benchmarks.md, "Issue 22: long documents".
 *
 *   npx tsx bench/long-documents/long-documents.ts [--label after] [--variants fused,rerank] [--chunk-size 1000] [--rerank-candidates 10] [--rerank-timeout-ms N] [--search '{"top_k":5}'] [--out FILE]
 *
 * The PDFs are not in the repository: put them in .data/long-documents/ (their source repository, path, commit
 * and SHA-256 are in the manifest; each is checked before the run).
 * --label   names the run in its output (e.g. "before" when run on a tree without document context)
 * --variants  each a pass over the questions on the one ingested index: `fused` (the collection default:
 *            reranking off; it asks nothing of it, so a tree from before reranking runs it too) and `rerank`
 *            (`rerank: true`, the collection's default candidate count)
 * --chunk-size  the collection's chunk_size (the default 1000 is the collection default)
 * --rerank-candidates  the collection's rerank_candidates, what the `rerank` variant reranks (default 10)
 * --rerank-timeout-ms  the API worker's RERANK_TIMEOUT_MS (default: the product's, 2000), to measure a candidate count
 *            past what the default budget allows; each pass reports how many questions were reranked
 * --search  JSON merged into every search request
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { log } from '../harness/format.ts';
import { loadFigures, machine } from '../harness/machine.ts';
import { createCollection, ingestAll, startBenchStack } from '../harness/stack.ts';
import { median, percentile } from '../harness/stats.ts';
import { User } from '../harness/user.ts';

interface Manifest {
  files: { name: string; repo: string; path: string; commit: string; sha256: string }[];
}
interface Question {
  question: string;
  document: string;
  figure: string;
}

const { values: flags } = parseArgs({
  options: {
    label: { type: 'string', default: 'run' },
    variants: { type: 'string', default: 'fused,rerank' },
    'chunk-size': { type: 'string', default: '1000' },
    'rerank-candidates': { type: 'string', default: '10' },
    'rerank-timeout-ms': { type: 'string' },
    search: { type: 'string', default: '{}' },
    out: { type: 'string' },
    data: { type: 'string', default: '.data/long-documents' },
  },
});
const here = import.meta.dirname;
const manifest = JSON.parse(readFileSync(join(here, 'manifest.json'), 'utf8')) as Manifest;
const { questions } = JSON.parse(readFileSync(join(here, 'questions.json'), 'utf8')) as { questions: Question[] };
const extra = JSON.parse(flags.search as string) as Record<string, unknown>;
const VARIANTS: Record<string, Record<string, unknown>> = { fused: {}, rerank: { rerank: true } };
const variants = (flags.variants as string).split(',').map((name) => {
  const body = VARIANTS[name];
  if (!body) throw new Error(`--variants: ${name} is not one of ${Object.keys(VARIANTS).join(', ')}`);
  return { name, body };
});

function readFiles() {
  return manifest.files.map((file) => {
    const path = join(flags.data as string, file.name);
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(readFileSync(path));
    } catch {
      throw new Error(`${path} is missing: it is ${file.path} of github.com/${file.repo} at ${file.commit}`);
    }
    const sha = createHash('sha256').update(bytes).digest('hex');
    if (sha !== file.sha256) throw new Error(`${path}: SHA-256 ${sha}, the manifest says ${file.sha256}`);
    return { name: file.name, bytes };
  });
}

/** The figure as a number of its own: "680" is not in "1,680" nor in "680.5". */
function holdsFigure(text: string, figure: string): boolean {
  const escaped = figure.replace(/[.$()]/gu, (c) => `\\${c}`);
  return new RegExp(`(?<![\\d,.])${escaped}(?![\\d]|[,.]\\d)`, 'u').test(text);
}

/**
 * One search, timed; a 5xx or 429 (a worker starved on a loaded machine) is tried again, up to three times, and
 * the time is the attempt that answered.
 */
async function search(user: User, body: Record<string, unknown>) {
  for (let attempt = 1; ; attempt++) {
    const started = performance.now();
    const response = await user.call('/query/search', { method: 'POST', json: body });
    const ms = performance.now() - started;
    if (response.ok || attempt === 3 || (response.status < 500 && response.status !== 429)) return { response, ms };
    log(`  search answered ${response.status} (${(await response.text()).slice(0, 200)}); trying again`);
    await new Promise((resolve) => setTimeout(resolve, 2000 * attempt));
  }
}

type Row = { question: string; document: string; docAt5: boolean; figureAt5: boolean; ms: number; top: string[] };

/** Every question once, top 5, with one variant's switches. */
async function askAll(user: User, collectionId: string, variant: { name: string; body: Record<string, unknown> }) {
  const rows: Row[] = [];
  let reranked = 0;
  for (const q of questions) {
    const body = { question: q.question, collection_id: collectionId, top_k: 5, ...variant.body, ...extra };
    const { response, ms } = await search(user, body);
    if ((rows.length + 1) % 12 === 0) log(`  [${variant.name}] ${rows.length + 1}/${questions.length} questions asked`);
    if (!response.ok) throw new Error(`search failed: ${response.status} ${await response.text()}`);
    const { sources, rerank } = await response.json();
    if (rerank?.applied) reranked++;
    else if (variant.body.rerank) log(`  [${variant.name}] not reranked: ${rerank?.reason}`);
    const top = sources.slice(0, 5);
    const own = top.filter((s) => s.source === q.document);
    rows.push({
      question: q.question,
      document: q.document,
      docAt5: own.length > 0,
      figureAt5: own.some((s) => holdsFigure(s.text, q.figure)),
      ms,
      top: top.map((s) => s.source),
    });
  }
  const share = (pick: (r: Row) => boolean) => rows.filter(pick).length / rows.length;
  const ms = rows.map((r) => r.ms);
  for (const r of rows)
    if (!r.figureAt5) log(`  [${variant.name}] miss${r.docAt5 ? ' (figure)' : ''}: ${r.question} -> ${r.top.join(' | ')}`);
  const pass = {
    variant: variant.name,
    questions: rows.length,
    reranked,
    docAt5: share((r) => r.docAt5),
    figureAt5: share((r) => r.figureAt5),
    searchMs: { p50: Math.round(median(ms)), p99: Math.round(percentile(ms, 99)) },
    rows,
  };
  log(
    `${flags.label} ${variant.name}: doc@5 ${pass.docAt5.toFixed(3)}, figure@5 ${pass.figureAt5.toFixed(3)} over ${rows.length} questions; ` +
      `search p50 ${pass.searchMs.p50} ms, p99 ${pass.searchMs.p99} ms; load ${loadFigures().join(' ')}`,
  );
  return pass;
}

async function main() {
  const files = readFiles();
  const { cores, cpu, memGiB, node } = machine();
  const loadStart = loadFigures();
  log(`machine: ${cores} cores, ${cpu}, ${memGiB.toFixed(1)} GiB, Node ${node}, load ${loadStart.join(' ')}`);
  const timeout = flags['rerank-timeout-ms'];
  const stack = await startBenchStack(timeout ? { vars: { RERANK_TIMEOUT_MS: timeout } } : {});
  try {
    log(`stack up: embeddings ${stack.embeddings}`);
    const user = new User(stack);
    await user.signUpAsAdmin();
    const collectionId = await createCollection(stack, user.token, `long-documents-${flags.label}`);
    const config = {
      chunk_size: Number(flags['chunk-size']),
      retrieval_strategy: 'similarity',
      rerank_candidates: Number(flags['rerank-candidates']),
    };
    const configured = await user.call(`/collections/${collectionId}/config`, { method: 'PUT', json: config });
    if (!configured.ok) throw new Error(`PUT config failed: ${configured.status} ${await configured.text()}`);
    const ingest = await ingestAll(stack, user.token, collectionId, files, { pollMs: 500, timeoutMs: 3_600_000 });
    const chunks = ingest.files.reduce((n, f) => n + f.job.chunks_total, 0);
    log(`ingested ${files.length} reports, ${chunks} chunks, in ${(ingest.wallMs / 1000).toFixed(0)} s`);
    for (const f of ingest.files)
      if (f.job.status !== 'succeeded') log(`  ${f.name}: ${f.job.status} ${f.job.error_message ?? ''}`);

    const passes = [];
    for (const variant of variants) passes.push(await askAll(user, collectionId, variant));
    const result = {
      label: flags.label,
      date: new Date().toISOString(),
      machine: { cores, cpu, memGiB: Number(memGiB.toFixed(1)), node },
      loadavg: { start: loadStart, end: loadFigures() },
      embeddings: stack.embeddings,
      search: extra,
      reports: files.length,
      config,
      chunks,
      ingestSeconds: Math.round(ingest.wallMs / 1000),
      passes,
    };
    const out = flags.out ?? join(flags.data as string, `results-${flags.label}.json`);
    writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
    log(`written: ${out}`);
  } catch (error) {
    // Said before the stack stops: stopping it may take the process down with it.
    log(`failed: ${error instanceof Error ? error.stack : String(error)}`);
    throw error;
  } finally {
    await stack.stop();
  }
}

await main();
