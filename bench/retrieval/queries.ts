/** One pass of the SciFact queries through `POST /query/search` under one retrieval strategy, scored. */
import type { Schema } from '../../devstack/harness/api-call.ts';
import { pool } from '../harness/pool.ts';
import { mean, percentile } from '../harness/stats.ts';
import type { User } from '../harness/user.ts';
import type { Backend, RetrievalSettings, Strategy } from './flags.ts';
import { documentRanking, ndcgAtK, recallAtK } from './metrics.ts';
import { docIdOf, type Scifact } from './scifact.ts';

export interface StrategyRun {
  backend: Backend;
  /** The API's RETRIEVAL_FUSION for this pass ('sparse' on a stack without a model). */
  fusion: string;
  strategy: Strategy;
  queries: number;
  ndcg10: number;
  recall50: number;
  /** Queries with a relevant document among the first 5 sources: what an answer (top_k 5) cites. */
  hit5: number;
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
  perQuery: { id: string; ndcg10: number; recall50: number; hit5: boolean; ranked: string[] }[];
}

type Query = Scifact['queries'][number];

/** The search's response text and the client's wall time for it; a refusal throws. */
async function search(user: User, collectionId: string, query: Query, topK: number) {
  const sent = performance.now();
  const response = await user.call('/query/search', {
    method: 'POST',
    json: { question: query.text, collection_id: collectionId, top_k: topK },
  });
  const text = await response.text();
  const elapsed = performance.now() - sent;
  if (!response.ok) throw new Error(`search for query ${query.id} failed: ${response.status} ${text.slice(0, 500)}`);
  return { text, elapsed };
}

export async function runQueries(
  user: User,
  collectionId: string,
  backend: Backend,
  fusion: string,
  strategy: Strategy,
  data: Scifact,
  uploaded: ReadonlySet<string>,
  settings: RetrievalSettings,
): Promise<StrategyRun> {
  await user.signIn();
  await user.putConfig(collectionId, settings.chunkSize, strategy);
  const results: StrategyRun['perQuery'] = new Array(data.queries.length);
  const latencies: number[] = [];
  const retrieval: number[] = [];
  const embedding: number[] = [];
  let empty = 0;
  let unknownSources = 0;
  let docsReturned = 0;
  const started = performance.now();
  await pool(data.queries, settings.queryConcurrency, async (query, index) => {
    const { text, elapsed } = await search(user, collectionId, query, settings.topK);
    const body = JSON.parse(text) as Schema<'SearchResponse'>;
    latencies.push(elapsed);
    retrieval.push(body.retrieval_latency_ms);
    embedding.push(body.embedding_latency_ms);
    if (body.sources.length === 0) empty++;
    unknownSources += body.sources.filter((s) => !uploaded.has(docIdOf(s.source))).length;
    const ranked = documentRanking(body.sources, docIdOf);
    docsReturned += ranked.length;
    const judged = data.qrels.get(query.id) as Map<string, number>;
    const hit5 = body.sources.slice(0, 5).some((s) => (judged.get(docIdOf(s.source)) ?? 0) > 0);
    results[index] = { id: query.id, ndcg10: ndcgAtK(ranked, judged, 10), recall50: recallAtK(ranked, judged, 50), hit5, ranked };
  });
  // Latency without queueing behind the bench's own requests: the same searches, one at a time.
  const sequential: number[] = [];
  for (const query of data.queries.slice(0, settings.latencyQueries)) {
    sequential.push((await search(user, collectionId, query, settings.topK)).elapsed);
  }
  return {
    backend,
    fusion,
    strategy,
    queries: results.length,
    ndcg10: mean(results.map((r) => r.ndcg10)),
    recall50: mean(results.map((r) => r.recall50)),
    hit5: results.filter((r) => r.hit5).length / results.length,
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
