/**
 * Questions across collections, measured end to end (issue 22): what searching several namespaces at once
 * costs, and whether fusing their lists once ranks as well as one collection holding everything. The devstack
 * and both workers run as bench/retrieval/retrieval.ts runs them; the SciFact abstracts are uploaded twice, through
 * `POST /ingest/`, each abstract one chunk: all into one collection, and split round robin over --parts
 * collections.
 *
 *   npx tsx bench/retrieval/multi-collection.ts [--limit-queries 300] [--limit-docs 1000] [--parts 10]
 *     [--latency-counts 1,3,10] [--latency-queries 30] [--out results.json]
 *
 * Quality, nDCG@10 on SciFact's training queries, top_k 10:
 * - `one`: the collection holding every abstract (`collection_id`);
 * - `across`: the parts together (`collection_ids`), as the API fuses them: each list merged over the
 *   namespaces by score, then fused once (src/retrieval/across-namespaces.ts);
 * - `perPart`: what fusing inside each collection first would give: each part searched alone (its own fused
 *   scores) and the lists merged by score here.
 * Latency: the first --latency-queries questions, top_k 5, over the first N parts for each N of
 * --latency-counts (1 is `collection_id`), one at a time, in rounds so that every count sees the same load.
 */
import { writeFileSync } from 'node:fs';
import type { Schema } from '../../devstack/harness/api-call.ts';
import { readFlags, text, whole, wholeNumbers } from '../harness/flags.ts';
import { log } from '../harness/format.ts';
import { loadFigures, machine } from '../harness/machine.ts';
import { createCollection } from '../harness/stack.ts';
import { mean, percentile } from '../harness/stats.ts';
import { User } from '../harness/user.ts';
import { hasModel, startStack } from './backend.ts';
import type { RetrievalSettings } from './flags.ts';
import { ingestScifact } from './ingest.ts';
import { documentRanking, ndcgAtK } from './metrics.ts';
import { docIdOf, loadScifact } from './scifact.ts';

const SHARED_DATA = new URL('../../../shared/data/', import.meta.url).pathname;

const flags = readFlags({
  data: text(),
  'limit-queries': whole('300', 1),
  'limit-docs': whole('1000', 1),
  parts: whole('10', 2, 10),
  'latency-counts': wholeNumbers('1,3,10', 1),
  'latency-queries': whole('30', 0),
  out: text(),
});

type Source = Schema<'Source'>;

async function main() {
  const data = loadScifact(flags.data ?? `${SHARED_DATA}scifact`, flags['limit-docs'], flags['limit-queries']);
  const host = machine();
  const loadStart = loadFigures();
  log(`machine: ${host.cores} cores, ${host.cpu}, Node ${host.node}, load ${loadStart}`);
  log(`data: scifact, ${data.docs.length} of ${data.corpusSize} documents, ${data.queries.length} queries`);

  const stack = await startStack(false);
  try {
    if (!hasModel(stack)) throw new Error('the devstack has no embedding model: hybrid retrieval is not available');
    log(`stack up: embeddings ${stack.embeddings}`);
    const user = new User(stack);
    await user.signUpAsAdmin();
    const settings = {
      chunkSize: 8000,
      format: 'txt',
      uploadConcurrency: 8,
      maxPending: 64,
      queryConcurrency: 8,
      pollMs: 250,
      timeoutMs: 90 * 60_000,
    } as RetrievalSettings;
    const collection = async (name: string, docs: typeof data.docs) => {
      const id = await createCollection(stack, user.token, name);
      await user.putConfig(id, 8000, 'similarity');
      const ingest = await ingestScifact(user, id, 'hybrid', docs, settings);
      if (ingest.failures.length > 0) throw new Error(`${name}: ${ingest.failures.length} documents failed`);
      return { id, ingestS: ingest.wallMs / 1000 };
    };
    const one = await collection('all', data.docs);
    const parts: string[] = [];
    let partsIngestS = 0;
    for (let part = 0; part < flags.parts; part++) {
      const made = await collection(
        `part-${part}`,
        data.docs.filter((_, i) => i % flags.parts === part),
      );
      parts.push(made.id);
      partsIngestS += made.ingestS;
    }

    const search = async (question: string, topK: number, where: { collection_id: string } | { collection_ids: string[] }) => {
      const sent = performance.now();
      const response = await user.call('/query/search', { method: 'POST', json: { question, top_k: topK, ...where } });
      const raw = await response.text();
      const wall = performance.now() - sent;
      if (!response.ok) throw new Error(`search failed: ${response.status} ${raw.slice(0, 300)}`);
      return { sources: (JSON.parse(raw) as Schema<'SearchResponse'>).sources, wall };
    };

    const scores = { one: [] as number[], across: [] as number[], perPart: [] as number[] };
    const qualityStarted = performance.now();
    for (const query of data.queries) {
      const judged = data.qrels.get(query.id) as Map<string, number>;
      const ndcg = (sources: readonly Source[]) => ndcgAtK(documentRanking(sources, docIdOf), judged, 10);
      scores.one.push(ndcg((await search(query.text, 10, { collection_id: one.id })).sources));
      scores.across.push(ndcg((await search(query.text, 10, { collection_ids: parts })).sources));
      const each = await Promise.all(parts.map((id) => search(query.text, 10, { collection_id: id })));
      const merged = each.flatMap((r) => r.sources).sort((a, b) => b.score - a.score);
      scores.perPart.push(ndcg(merged.slice(0, 10)));
    }
    const quality = {
      queries: data.queries.length,
      parts: flags.parts,
      ndcg10: Object.fromEntries(Object.entries(scores).map(([k, v]) => [k, Number(mean(v).toFixed(4))])),
      wallS: Number(((performance.now() - qualityStarted) / 1000).toFixed(1)),
      load: loadFigures(),
    };
    log(`quality: ${JSON.stringify(quality)}`);

    const asked = data.queries.slice(0, flags['latency-queries']);
    const counts = flags['latency-counts'].filter((n) => n <= flags.parts);
    const walls = new Map(counts.map((n) => [n, [] as number[]]));
    for (const query of asked) {
      for (const n of counts) {
        const where = n === 1 ? { collection_id: parts[0] as string } : { collection_ids: parts.slice(0, n) };
        walls.get(n)?.push((await search(query.text, 5, where)).wall);
      }
    }
    const base = percentile(walls.get(counts[0] as number) ?? [], 50);
    const latency = counts.map((n) => {
      const values = walls.get(n) ?? [];
      const p50 = percentile(values, 50);
      return {
        collections: n,
        queries: values.length,
        p50Ms: p50,
        p99Ms: percentile(values, 99),
        p50Ratio: Number((p50 / base).toFixed(2)),
      };
    });
    log(`latency: ${JSON.stringify(latency)}`);

    const report = {
      dataset: 'scifact',
      date: new Date().toISOString(),
      machine: { ...host, loadStart, loadEnd: loadFigures() },
      embeddings: stack.embeddings,
      docs: data.docs.length,
      ingestS: { one: one.ingestS, parts: partsIngestS },
      quality,
      latency,
    };
    console.log(JSON.stringify(report, null, 2));
    if (flags.out) writeFileSync(flags.out, JSON.stringify(report, null, 2));
  } finally {
    await stack.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
