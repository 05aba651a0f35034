/**
 * Retrieval quality on BEIR SciFact, end to end: every abstract is uploaded through `POST /ingest/`
 * (QStash, the ingest worker, Upstash Vector: the devstack and both workers, as bench/ingest/ingest.ts runs
 * them), then every training query is asked through `POST /query/search` and scored with BEIR's nDCG@10
 * and recall@50. See docs/benchmarks.md, "Retrieval (BEIR SciFact)".
 *
 *   npx tsx bench/retrieval/retrieval.ts [--limit-docs N] [--limit-queries N] [--backends sparse,hybrid]
 *     [--strategies similarity,mmr] [--chunk-size 8000] [--upload-concurrency 8] [--max-pending 64]
 *     [--query-concurrency 8] [--data DIR] [--out results.json]
 *
 * --backends     sparse: BM25 alone (the devstack started with its embedding model switched off);
 *                hybrid: dense + sparse fused, which needs an embedding model in the devstack
 *                (DEVSTACK_EMBEDDING_MODEL, or one under shared/weights). Without one, hybrid is reported
 *                as not available and the stack that was started serves the sparse run.
 * --strategies   the collection's retrieval_strategy for each pass over the queries (PUT config between passes)
 * --fusions      on the hybrid stack, each RETRIEVAL_FUSION to query the one index with (an API worker each);
 *                `<fusion>/noprefix` embeds the questions without the model's query instruction
 *                (EMBEDDING_QUERY_PREFIX=none), to weigh it. The model is the devstack's: bge-small-en-v1.5
 *                by default, DEVSTACK_EMBEDDING_MODEL=all-MiniLM-L6-v2 for the earlier one
 * --limit-docs   quick runs: the documents judged relevant for the chosen queries, then others in corpus order
 * --limit-queries  quick runs: the first N training queries of qrels/train.tsv
 * --format       txt (default): the title as the first line; md: as a `#` heading, carried with every chunk
 * --dataset      scifact (default), or pubmedqa: its 500 labelled questions over their 500 abstracts, each
 *                question's own abstract the one relevant document (hit@5: it is among an answer's 5 sources)
 */
import { log } from '../harness/format.ts';
import { load, loadFigures, machine } from '../harness/machine.ts';
import { hasModel, runBackend, startStack } from './backend.ts';
import { readRetrievalFlags } from './flags.ts';
import { type BackendRun, reportTable, writeReport } from './report.ts';
import { loadPubmedqa, loadScifact } from './scifact.ts';

const settings = readRetrievalFlags();

async function main() {
  const data =
    settings.dataset === 'pubmedqa'
      ? loadPubmedqa(settings.data, settings.limitQueries)
      : loadScifact(settings.data, settings.limitDocs, settings.limitQueries);
  const { cores: nproc, cpu, memGiB, node } = machine();
  const facts = { nproc, cpu, memGiB: Number(memGiB.toFixed(1)), node, loadavgStart: loadFigures() };
  log(`machine: ${nproc} cores, ${cpu}, ${facts.memGiB} GiB, Node ${node}, load ${facts.loadavgStart}`);
  log(
    `data: ${data.docs.length} of ${data.corpusSize} documents, ${data.queries.length} training queries, ` +
      `${[...data.qrels.values()].reduce((n, j) => n + j.size, 0)} judgements`,
  );

  const results: BackendRun[] = [];
  const unavailable: Record<string, string> = {};
  const todo = new Set(settings.backends);
  const benchStarted = performance.now();

  if (todo.has('hybrid')) {
    const stack = await startStack(false);
    try {
      log(`stack up: embeddings ${stack.embeddings}`);
      if (hasModel(stack)) {
        results.push(await runBackend(stack, 'hybrid', data, settings));
      } else {
        unavailable.hybrid = 'not available here (no embedding model in the devstack)';
        log(`hybrid: ${unavailable.hybrid}`);
        // This stack is sparse-only already: it serves the sparse run.
        if (todo.has('sparse')) {
          results.push(await runBackend(stack, 'sparse', data, settings));
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
      results.push(await runBackend(stack, 'sparse', data, settings));
    } finally {
      await stack.stop();
    }
  }

  const wallMs = performance.now() - benchStarted;
  reportTable(results, unavailable, settings.queryConcurrency);
  log(`bench wall time ${(wallMs / 1000).toFixed(0)} s; load average at the end ${load()}`);

  if (settings.out) {
    const { chunkSize, topK, uploadConcurrency, maxPending, queryConcurrency, latencyQueries, limitDocs, limitQueries } =
      settings;
    writeReport(settings.out, {
      command: process.argv.slice(1).join(' '),
      machine: { ...facts, loadavgEnd: loadFigures() },
      settings: { chunkSize, topK, uploadConcurrency, maxPending, queryConcurrency, latencyQueries, limitDocs, limitQueries },
      docs: data.docs.length,
      queries: data.queries.length,
      unavailable,
      results,
      wallMs,
    });
  }
}

await main();
