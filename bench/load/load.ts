/**
 * Load run (issue 9): many small uploads at once and many answer streams at once against a local
 * deployment like `npm run dev` (the devstack in a Node process of its own, the API and ingest workers
 * under `wrangler dev`), on loopback.
 *
 *   npx tsx bench/load/load.ts [--uploads 300] [--upload-concurrency 100] [--streams 200] [--queries 400]
 *     [--database-url postgres://postgres@127.0.0.1:5432/test] [--embedding-model DIR|off]
 *     [--roots before=/tmp/load-before,after=.] [--rounds 1] [--profile DIR] [--json] [--out FILE]
 *
 * Uploads   PubMedQA abstracts (about 1.3 KB of text each) sent to `POST /ingest/` by
 *           --upload-concurrency clients at once, each sending its next file when the last was accepted.
 *           Acceptance: upload start → the answer with its job id. End to end: documents per second from
 *           the first upload until every job is terminal (followed in the database, not polled through
 *           the API), and each document's upload → terminal time.
 * Queries   --queries `POST /query/` requests from --streams clients at once, each reading its answer
 *           stream (after a warm-up of --query-warm-up). TTFT: start → first token. TTFT overhead: TTFT
 *           minus the reported embedding and retrieval times and the model's own time to first content
 *           (a timing proxy in front of the model endpoint sees it). Service overhead: start → done
 *           minus embedding, retrieval and the whole model call, as bench/query/query.ts reports it.
 * --database-url   a PostgreSQL server: each run gets a database of its own on it, dropped afterwards
 *                  (default: PGlite, as `npm run dev`)
 * --embedding-model  the devstack's DEVSTACK_EMBEDDING_MODEL; `off` (default) is sparse vectors only
 * --direct-db  the workers connect to the database itself, not through the devstack's fault proxy
 * --trace-upstreams  the API worker's Storage, QStash and Vector calls through the timing proxy too, and
 *                    each upload phase's calls listed (costs the bench process CPU)
 * --roots    checkouts to run, label=path, comma-separated: each round runs every one, in alternating order;
 *            label=path@model gives that run its own --embedding-model (sparse=.@off,hybrid=.@DIR compares the two)
 * --profile  write a CPU profile of the devstack's main thread per phase there, and print its top functions
 * --json     print the results as JSON on stdout (the progress and tables go to stderr)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { decimal, fail, readFlags, text, toggle, whole } from '../harness/flags.ts';
import { load, loadFigures, machine } from '../harness/machine.ts';
import { roundsTable, table } from './report.ts';
import { type RunResult, runOnce } from './run.ts';

const flags = readFlags({
  uploads: whole('200', 1, 495),
  'upload-concurrency': whole('100', 1),
  'steady-uploads': whole('250', 0, 495),
  'steady-rate': decimal('20'),
  streams: whole('200', 0, 495),
  queries: whole('400', 1),
  'query-warm-up': whole('40', 0),
  'database-url': text(),
  'embedding-model': text('off'),
  'token-delay': decimal('10'),
  'direct-db': toggle(),
  'trace-upstreams': toggle(),
  roots: text(`this=${resolve('.')}`),
  rounds: whole('1', 1),
  profile: text(),
  json: toggle(),
  out: text(),
});

const log = (line = '') => (flags.json ? console.error(line) : console.log(line));

function parseRoots(value: string): { label: string; root: string; embeddingModel?: string }[] {
  return value.split(',').map((entry) => {
    const [label, target] = entry.includes('=') ? (entry.split('=', 2) as [string, string]) : [entry, entry];
    const [path, embeddingModel] = target.split('@', 2) as [string, string | undefined];
    if (!label || !path) fail(`--roots: label=path, got "${entry}"`);
    return { label, root: resolve(path), embeddingModel };
  });
}

async function main() {
  const roots = parseRoots(flags.roots);
  if (flags.uploads + flags['steady-uploads'] > 495) fail('--uploads and --steady-uploads: 495 PubMedQA abstracts in all');
  if (!(flags['steady-rate'] > 0)) fail('--steady-rate must be above 0');
  if (flags.profile) mkdirSync(flags.profile, { recursive: true });
  const facts = { ...machine(), loadAtStart: loadFigures() };
  log(
    `machine: ${facts.cpus} CPUs (${facts.cores} usable, ${facts.cpu}), ${facts.memGiB.toFixed(1)} GiB, Node ${facts.node}; ` +
      `load average ${load().join(' ')}`,
  );
  log(
    `plan: ${flags.uploads} uploads by ${flags['upload-concurrency']} clients, then ${flags['steady-uploads']} at ` +
      `${flags['steady-rate']} a second; ${flags.queries} queries by ${flags.streams} streams; ` +
      `database ${flags['database-url'] ? 'PostgreSQL' : 'PGlite'}; embeddings ${flags['embedding-model']}; ` +
      `${flags.rounds} round(s) of ${roots.map((r) => `${r.label} (${r.root})`).join(', ')}`,
  );
  const runs: RunResult[] = [];
  for (let round = 1; round <= flags.rounds; round++) {
    // Alternating order, so that neither checkout always runs on a machine the other just warmed.
    const order = round % 2 === 1 ? roots : [...roots].reverse();
    for (const { label, root, embeddingModel } of order) {
      runs.push(
        await runOnce({
          label,
          root,
          round,
          uploads: flags.uploads,
          uploadConcurrency: flags['upload-concurrency'],
          steadyUploads: flags['steady-uploads'],
          steadyRate: flags['steady-rate'],
          streams: flags.streams,
          queries: flags.queries,
          queryWarmUp: flags['query-warm-up'],
          databaseUrl: flags['database-url'],
          embeddingModel: embeddingModel ?? flags['embedding-model'],
          tokenDelayMs: flags['token-delay'],
          directDatabase: flags['direct-db'],
          traceUpstreams: flags['trace-upstreams'],
          profileDir: flags.profile,
          log,
        }),
      );
    }
  }
  // The checkouts in the order given, so that the ratio is the last given over the first.
  runs.sort((a, b) => roots.findIndex((r) => r.label === a.label) - roots.findIndex((r) => r.label === b.label));
  log(`\n${table(runs)}\n\n${roundsTable(runs)}`);
  for (const run of runs) {
    const problems = [...run.uploads.errorExamples, ...(run.steady?.errorExamples ?? []), ...(run.queries?.errorExamples ?? [])];
    for (const problem of problems) log(`  ${run.label} #${run.round}: ${problem}`);
  }
  log(`\nload average at the end: ${load().join(' ')}`);
  const results = { machine: { ...facts, loadAtEnd: loadFigures() }, flags, runs };
  if (flags.out) writeFileSync(flags.out, `${JSON.stringify(results, null, 2)}\n`);
  if (flags.json) console.log(JSON.stringify(results, null, 2));
}

await main();
