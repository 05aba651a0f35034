/**
 * Reranking, measured end to end (issue 22): what the cross-encoder adds to `POST /query/search`, and whether
 * its order ranks better than fusion. The devstack and both workers run as bench/retrieval/retrieval.ts runs them; the
 * corpus is uploaded through `POST /ingest/`, each abstract one chunk (chunk_size 8000).
 *
 *   npx tsx bench/retrieval/rerank.ts [--dataset scifact|pubmedqa] [--limit-queries 100] [--limit-docs 1000]
 *     [--candidates 10,30] [--latency-candidates 10,30,50] [--latency-queries 30] [--out results.json]
 *
 * Quality: for each candidate count C, the collection reranks C candidates and each query asks for top_k C
 * with `rerank: true`, so every returned source carries both its fused `score` and its `rerank_score`. From
 * one reranker call per query the three orders are scored on the same queries: fused (by `score`), replaced
 * (by `rerank_score`), and fused back by RRF (k = 60, as src/retrieval/rerank.ts does); the API's own order
 * is checked to be the configured one. nDCG@10 for SciFact's training queries, hit@5 (the question's own
 * abstract among the first 5) for PubMedQA.
 *
 * Latency: the first --latency-queries queries one at a time, at each candidate count, each asked with
 * `rerank: true` and then `false`: the reranker's time as the API reports it (`rerank.latency_ms`, kept out
 * of retrieval_latency_ms) and the client's wall time with minus without. An API worker with a 60 s rerank
 * budget serves the whole run, so that no count is cut short by the default budget.
 */
import { writeFileSync } from 'node:fs';
import type { Schema } from '../../devstack/harness/api-call.ts';
import { fastRetries, startLocalDeployment, UNLIMITED_RATES } from '../../devstack/local/deployment.ts';
import { readFlags, text, whole, wholeNumbers } from '../harness/flags.ts';
import { log } from '../harness/format.ts';
import { loadFigures, machine } from '../harness/machine.ts';
import { type BenchStack, createCollection } from '../harness/stack.ts';
import { mean, percentile } from '../harness/stats.ts';
import { User } from '../harness/user.ts';
import type { RetrievalSettings } from './flags.ts';
import { ingestScifact } from './ingest.ts';
import { documentRanking, ndcgAtK } from './metrics.ts';
import { docIdOf, loadPubmedqa, loadScifact } from './scifact.ts';

const SHARED_DATA = new URL('../../../shared/data/', import.meta.url).pathname;
const RRF_K = 60;

const flags = readFlags({
  dataset: text('scifact'),
  data: text(),
  'limit-queries': whole('100', 1),
  'limit-docs': whole('1000', 1),
  candidates: wholeNumbers('10,30', 1),
  'latency-candidates': wholeNumbers('10,30,50', 1),
  'latency-queries': whole('30', 0),
  out: text(),
});
if (flags.dataset !== 'scifact' && flags.dataset !== 'pubmedqa') throw new Error('--dataset: scifact or pubmedqa');

type Source = Schema<'Source'>;

/** The three orders of one reranked candidate list. */
function orders(sources: readonly Source[]) {
  const key = (s: Source) => `${s.source}#${s.chunk_index}`;
  const fused = [...sources].sort((a, b) => b.score - a.score);
  const replaced = [...sources].sort((a, b) => (b.rerank_score ?? -1) - (a.rerank_score ?? -1));
  const fusedRank = new Map(fused.map((s, i) => [key(s), i]));
  const rerankRank = new Map(replaced.map((s, i) => [key(s), i]));
  const rrf = (s: Source) => 1 / (RRF_K + 1 + (fusedRank.get(key(s)) ?? 0)) + 1 / (RRF_K + 1 + (rerankRank.get(key(s)) ?? 0));
  const fusedBack = [...sources].sort((a, b) => rrf(b) - rrf(a) || (fusedRank.get(key(a)) ?? 0) - (fusedRank.get(key(b)) ?? 0));
  return { fused, replaced, rrf: fusedBack, api: [...sources] };
}

/** PubMedQA's asked questions' own abstracts first, then others, up to `limit` documents. */
function limitDocs<D extends ReturnType<typeof loadPubmedqa>>(data: D, limit: number): D {
  const own = new Set([...data.qrels.values()].flatMap((judged) => [...judged.keys()]));
  const docs = [...data.docs.filter((d) => own.has(d.id)), ...data.docs.filter((d) => !own.has(d.id))].slice(
    0,
    Math.max(limit, own.size),
  );
  return { ...data, docs };
}

async function main() {
  const dataset = flags.dataset as 'scifact' | 'pubmedqa';
  const data =
    dataset === 'pubmedqa'
      ? limitDocs(loadPubmedqa(flags.data ?? `${SHARED_DATA}pubmedqa/pqal_dev.json`, flags['limit-queries']), flags['limit-docs'])
      : loadScifact(flags.data ?? `${SHARED_DATA}scifact`, flags['limit-docs'], flags['limit-queries']);
  const host = machine();
  const loadStart = loadFigures();
  log(`machine: ${host.cores} cores, ${host.cpu}, Node ${host.node}, load ${loadStart}`);
  log(`data: ${dataset}, ${data.docs.length} of ${data.corpusSize} documents, ${data.queries.length} queries`);

  // One API worker with a 60 s rerank budget serves the whole run (a second one could not start in time on a
  // loaded machine), so that no candidate count is cut short by the default budget.
  const deployment = await startLocalDeployment({
    devstack: { qstashBackoffMs: fastRetries },
    scoring: false,
    vars: { ...UNLIMITED_RATES, RERANK_TIMEOUT_MS: '60000' },
    quiet: true,
  });
  const stack = {
    apiUrl: deployment.api.url,
    supabaseUrl: deployment.stack.supabaseUrl,
    anonKey: deployment.stack.keys.anonKey,
    serviceRoleKey: deployment.stack.keys.serviceRoleKey,
    embeddings: deployment.stack.embeddings
      ? `${deployment.stack.embeddings.model} (${deployment.stack.embeddings.dimension} d)`
      : 'none',
    stop: deployment.stop,
  };
  try {
    if (!deployment.stack.embeddings) throw new Error('the devstack has no embedding model: hybrid retrieval is not available');
    log(`stack up: embeddings ${stack.embeddings}, reranker ${deployment.stack.rerankModel}`);
    const user = new User(stack as unknown as BenchStack);
    await user.signUpAsAdmin();
    const collectionId = await createCollection(stack, user.token, `rerank-${dataset}`);
    const config = (extra: Record<string, unknown>) =>
      user.call(`/collections/${collectionId}/config`, {
        method: 'PUT',
        json: { chunk_size: 8000, retrieval_strategy: 'similarity', ...extra },
      });
    await config({});
    const settings = {
      chunkSize: 8000,
      format: 'txt',
      uploadConcurrency: 8,
      maxPending: 64,
      queryConcurrency: 8,
      pollMs: 250,
      timeoutMs: 90 * 60_000,
    } as RetrievalSettings;
    const ingest = await ingestScifact(user, collectionId, 'hybrid', data.docs, settings);

    const client = user;
    {
      // wrangler dev restarts the worker when a source file changes (other people edit the tree while this
      // runs): such a 503 is asked again, up to five times, and only the answered try is timed.
      const search = async (question: string, topK: number, rerank: boolean) => {
        for (let attempt = 0; ; attempt++) {
          const sent = performance.now();
          const response = await client.call('/query/search', {
            method: 'POST',
            json: { question, collection_id: collectionId, top_k: topK, rerank },
          });
          const raw = await response.text();
          const wall = performance.now() - sent;
          if (response.ok) return { body: JSON.parse(raw) as Schema<'SearchResponse'>, wall };
          if (response.status !== 503 || attempt >= 5) throw new Error(`search failed: ${response.status} ${raw.slice(0, 300)}`);
          log(`search: ${response.status}, asking again`);
          await new Promise((resolve) => setTimeout(resolve, 3000));
        }
      };

      const quality: Record<string, unknown>[] = [];
      for (const candidates of flags.candidates) {
        const put = await config({ rerank_candidates: candidates });
        if (!put.ok) throw new Error(`PUT config: ${put.status} ${await put.text()}`);
        const scores = { fused: [] as number[], replaced: [] as number[], rrf: [] as number[], api: [] as number[] };
        const hits = { fused: 0, replaced: 0, rrf: 0, api: 0 };
        let notApplied = 0;
        let apiIsRrf = 0;
        const latencies: number[] = [];
        const started = performance.now();
        for (const query of data.queries) {
          const { body } = await search(query.text, candidates, true);
          if (!body.rerank.applied) notApplied++;
          else latencies.push(body.rerank.latency_ms ?? 0);
          const judged = data.qrels.get(query.id) as Map<string, number>;
          const ranked = orders(body.sources);
          const same = (a: Source[], b: Source[]) =>
            a.every((s, i) => s.source === b[i]?.source && s.chunk_index === b[i]?.chunk_index);
          if (same(ranked.api, ranked.rrf)) apiIsRrf++;
          for (const name of ['fused', 'replaced', 'rrf', 'api'] as const) {
            const list = ranked[name];
            scores[name].push(ndcgAtK(documentRanking(list, docIdOf), judged, 10));
            if (list.slice(0, 5).some((s) => (judged.get(docIdOf(s.source)) ?? 0) > 0)) hits[name]++;
          }
        }
        const n = data.queries.length;
        const pass = {
          candidates,
          queries: n,
          notApplied,
          apiOrderIsRrf: apiIsRrf,
          ndcg10: Object.fromEntries(Object.entries(scores).map(([k, v]) => [k, Number(mean(v).toFixed(4))])),
          hit5: Object.fromEntries(Object.entries(hits).map(([k, v]) => [k, Number((v / n).toFixed(4))])),
          rerankMs: { p50: percentile(latencies, 50), p99: percentile(latencies, 99) },
          wallS: Number(((performance.now() - started) / 1000).toFixed(1)),
          load: loadFigures(),
        };
        log(`quality at ${candidates} candidates: ${JSON.stringify(pass)}`);
        quality.push(pass);
      }

      const latency: Record<string, unknown>[] = [];
      const asked = data.queries.slice(0, flags['latency-queries']);
      for (const candidates of asked.length > 0 ? flags['latency-candidates'] : []) {
        await config({ rerank_candidates: candidates });
        const reranker: number[] = [];
        const added: number[] = [];
        const without: number[] = [];
        for (const query of asked) {
          // top_k 5, as an answer asks: reranking's cost is in its candidates, not in what is returned.
          const on = await search(query.text, 5, true);
          const off = await search(query.text, 5, false);
          if (!on.body.rerank.applied) throw new Error(`not reranked at ${candidates}: ${on.body.rerank.reason}`);
          reranker.push(on.body.rerank.latency_ms ?? 0);
          added.push(on.wall - off.wall);
          without.push(off.wall);
        }
        const row = {
          candidates,
          queries: asked.length,
          rerankMs: { p50: percentile(reranker, 50), p99: percentile(reranker, 99) },
          addedWallMs: { p50: percentile(added, 50), p99: percentile(added, 99) },
          searchWithoutMs: { p50: percentile(without, 50), p99: percentile(without, 99) },
          load: loadFigures(),
        };
        log(`latency at ${candidates} candidates: ${JSON.stringify(row)}`);
        latency.push(row);
      }
      const report = {
        dataset,
        date: new Date().toISOString(),
        machine: { ...host, loadStart, loadEnd: loadFigures() },
        embeddings: stack.embeddings,
        docs: data.docs.length,
        queries: data.queries.length,
        ingest: { docs: ingest.docs, chunks: ingest.chunks, statuses: ingest.statuses, wallS: ingest.wallMs / 1000 },
        quality,
        latency,
      };
      console.log(JSON.stringify(report, null, 2));
      if (flags.out) writeFileSync(flags.out, JSON.stringify(report, null, 2));
    }
  } finally {
    await stack.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
