/**
 * Recall of the devstack vector index's dense query against exact search.
 *
 *   npx tsx bench/retrieval/vector-recall.ts [--vectors 100000] [--dimension 384] [--queries 200] [--batch 1000]
 *     [--clusters 200] [--spread 1.0] [--connectivity 16] [--expansion-add 128] [--expansion-search 128]
 *
 * It starts a memory-only vector server in this process (HNSW settings from the flags), unless
 * VECTOR_URL and VECTOR_TOKEN name a running one (e.g. `npm run dev`'s, which must be an empty
 * dense COSINE index of the same dimension). Vectors go in through @upstash/vector in batches;
 * then each query's top 10 is compared with the exact top 10 computed here by brute force.
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Index } from '@upstash/vector';
import { Hono } from 'hono';
import { seededRandom } from '../../devstack/harness/seeded-random.ts';
import { createVectorServer, defaultHnsw } from '../../devstack/vector/server.ts';
import { decimal, readFlags, whole } from '../harness/flags.ts';

const flags = readFlags({
  vectors: whole('100000', 1),
  dimension: whole('384', 1),
  queries: whole('200', 1),
  batch: whole('1000', 1),
  clusters: whole('200', 1),
  spread: decimal('1.0'),
  seed: whole('42'),
  connectivity: whole(undefined, 1),
  'expansion-add': whole(undefined, 1),
  'expansion-search': whole(undefined, 1),
});

const { vectors: count, dimension, queries: queryCount, batch: batchSize, clusters: clusterCount, spread } = flags;
const topK = 10;

const uniform = seededRandom(flags.seed);
function gaussian(): number {
  // Box-Muller; 1 - u keeps the logarithm finite.
  return Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
}

function normalize(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const x of vector) norm += x * x;
  norm = Math.sqrt(norm);
  for (let i = 0; i < vector.length; i++) vector[i]! /= norm;
  return vector;
}

/**
 * A Gaussian mixture on the unit sphere, like text embeddings: topics (cluster centres) of
 * uneven popularity, each point its centre plus isotropic noise of `spread` times the centre's
 * length, normalized. With spread 1 two points of one topic have cosine about 0.5, of two
 * topics about 0, as sentence embeddings of related and unrelated passages roughly do.
 */
const centres = Array.from({ length: clusterCount }, () => normalize(Float32Array.from({ length: dimension }, gaussian)));
const popularity = centres.map(() => -Math.log(1 - uniform()));
const totalPopularity = popularity.reduce((a, b) => a + b, 0);
function drawPoint(): Float32Array {
  let pick = uniform() * totalPopularity;
  let cluster = 0;
  while (cluster < clusterCount - 1 && pick > popularity[cluster]!) pick -= popularity[cluster++]!;
  const centre = centres[cluster]!;
  const scale = spread / Math.sqrt(dimension);
  return normalize(Float32Array.from(centre, (x) => x + scale * gaussian()));
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function main() {
  const hnsw = {
    ...(flags.connectivity ? { connectivity: flags.connectivity } : {}),
    ...(flags['expansion-add'] ? { expansionAdd: flags['expansion-add'] } : {}),
    ...(flags['expansion-search'] ? { expansionSearch: flags['expansion-search'] } : {}),
  };
  let url = process.env.VECTOR_URL;
  let token = process.env.VECTOR_TOKEN;
  let stop = async () => {};
  if (!url || !token) {
    token = 'bench-token';
    const vector = await createVectorServer({ token, indexType: 'DENSE', dimension, similarityFunction: 'COSINE', hnsw });
    const root = new Hono().route('/vector', vector.app);
    const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
      const listening = serve({ fetch: root.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(listening));
    });
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/vector`;
    stop = async () => {
      await vector.close();
      server.close();
    };
  }
  const index = new Index({ url, token, retry: false, enableTelemetry: false });

  console.log(`drawing ${count} + ${queryCount} vectors of dimension ${dimension} from ${clusterCount} clusters`);
  const data = Array.from({ length: count }, drawPoint);
  const queries = Array.from({ length: queryCount }, drawPoint);

  const upsertStart = performance.now();
  for (let start = 0; start < count; start += batchSize) {
    const batch = data.slice(start, start + batchSize).map((vector, i) => ({ id: `v${start + i}`, vector: Array.from(vector) }));
    await index.upsert(batch);
  }
  const upsertSeconds = (performance.now() - upsertStart) / 1000;
  console.log(`upserted in ${upsertSeconds.toFixed(1)} s`);

  const latencies: number[] = [];
  const found: string[][] = [];
  for (const query of queries) {
    const start = performance.now();
    const results = await index.query({ vector: Array.from(query), topK });
    latencies.push(performance.now() - start);
    found.push(results.map((result) => String(result.id)));
  }

  // Exact top 10 by brute force: every vector is unit length, so cosine is the dot product.
  const exactStart = performance.now();
  let hits = 0;
  let top10Cosine = 0;
  queries.forEach((query, q) => {
    const best: { id: number; score: number }[] = [];
    for (let id = 0; id < count; id++) {
      const vector = data[id]!;
      let dot = 0;
      for (let i = 0; i < dimension; i++) dot += query[i]! * vector[i]!;
      if (best.length < topK || dot > best[best.length - 1]!.score) {
        best.push({ id, score: dot });
        best.sort((a, b) => b.score - a.score);
        if (best.length > topK) best.pop();
      }
    }
    top10Cosine += best.reduce((sum, { score }) => sum + score, 0) / topK;
    const expected = new Set(best.map(({ id }) => `v${id}`));
    hits += found[q]!.filter((id) => expected.has(id)).length;
  });
  const exactSeconds = (performance.now() - exactStart) / 1000;
  await stop();

  latencies.sort((a, b) => a - b);
  const summary = {
    vectors: count,
    dimension,
    clusters: clusterCount,
    spread,
    queries: queryCount,
    batch: batchSize,
    hnsw: url === process.env.VECTOR_URL ? 'external server' : { ...defaultHnsw, ...hnsw },
    recallAt10: hits / (queryCount * topK),
    meanExactTop10Cosine: Number((top10Cosine / queryCount).toFixed(3)),
    upsertVectorsPerSecond: Math.round(count / upsertSeconds),
    upsertSeconds: Number(upsertSeconds.toFixed(1)),
    queryP50Ms: Number(percentile(latencies, 50).toFixed(2)),
    queryP99Ms: Number(percentile(latencies, 99).toFixed(2)),
    bruteForceSeconds: Number(exactSeconds.toFixed(1)),
  };
  console.log(JSON.stringify(summary, null, 2));
}

await main();
