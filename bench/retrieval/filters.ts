/**
 * What metadata filters cost `POST /query/search` (issue 22: at most 10 % more). The devstack and both workers
 * run as bench/retrieval/retrieval.ts runs them; a SciFact subset is uploaded through `POST /ingest/`, each abstract one
 * chunk, then every document gets metadata through `PATCH /collections/{id}/documents/{id}` (so the PATCH path
 * is timed too): `group` (its position modulo 10), `year` (2000 + position modulo 25) and `tags`.
 *
 *   npx tsx bench/retrieval/filters.ts [--limit-docs 500] [--limit-queries 100] [--rounds 3] [--out results.json]
 *
 * Each query is asked once per variant in a round, the variants' order rotating from query to query so that
 * the machine's load (other processes share its cores) falls on all of them alike: no filter; one metadata
 * equality (a tenth of the documents); a range matching nearly all; and a compound of and/or/not/in over
 * metadata and a built-in field. Reported: the median of the client's wall time and of the API's
 * `retrieval_latency_ms` per variant, and each filtered variant's ratio to the unfiltered median, from one run.
 */
import { writeFileSync } from 'node:fs';
import type { Schema } from '../../devstack/harness/api-call.ts';
import { readFlags, text, whole } from '../harness/flags.ts';
import { log } from '../harness/format.ts';
import { loadFigures, machine } from '../harness/machine.ts';
import { createCollection } from '../harness/stack.ts';
import { median, percentile } from '../harness/stats.ts';
import { User } from '../harness/user.ts';
import { hasModel, startStack } from './backend.ts';
import type { RetrievalSettings } from './flags.ts';
import { ingestScifact } from './ingest.ts';
import { loadScifact } from './scifact.ts';

const SHARED_DATA = new URL('../../../shared/data/', import.meta.url).pathname;

const flags = readFlags({
  data: text(),
  'limit-docs': whole('500', 1),
  'limit-queries': whole('100', 1),
  rounds: whole('3', 1),
  out: text(),
});

const VARIANTS: Record<string, unknown> = {
  none: undefined,
  equality: { 'metadata.group': 3 },
  range: { 'metadata.year': { gte: 2001 } },
  compound: {
    and: [
      { or: [{ 'metadata.group': { in: [1, 2, 3, 4, 5] } }, { 'metadata.tags': { contains: 'even' } }] },
      { not: { 'metadata.year': { lt: 2003 } } },
      { type: 'txt' },
    ],
  },
};

async function main() {
  const data = loadScifact(flags.data ?? `${SHARED_DATA}scifact`, flags['limit-docs'], flags['limit-queries']);
  const host = machine();
  const loadStart = loadFigures();
  log(`machine: ${host.cores} cores, ${host.cpu}, Node ${host.node}, load ${loadStart}`);
  log(`data: scifact, ${data.docs.length} of ${data.corpusSize} documents, ${data.queries.length} queries`);

  const stack = await startStack(false);
  try {
    if (!hasModel(stack)) throw new Error('the devstack has no embedding model: hybrid retrieval is not available');
    const user = new User(stack);
    await user.signUpAsAdmin();
    const collectionId = await createCollection(stack, user.token, 'filters-scifact');
    await user.call(`/collections/${collectionId}/config`, {
      method: 'PUT',
      json: { chunk_size: 8000, retrieval_strategy: 'similarity' },
    });
    const settings = {
      chunkSize: 8000,
      format: 'txt',
      // Few at once: the machine is shared, and PGlite's one connection is what gives way first.
      uploadConcurrency: 2,
      maxPending: 16,
      queryConcurrency: 2,
      pollMs: 250,
      timeoutMs: 90 * 60_000,
    } as RetrievalSettings;
    const ingest = await ingestScifact(user, collectionId, 'hybrid', data.docs, settings);
    log(`ingested ${ingest.docs} documents, ${ingest.chunks} chunks in ${(ingest.wallMs / 1000).toFixed(0)} s`);

    const listed = await (await user.call(`/collections/${collectionId}/documents`, { method: 'GET' })).json();
    const patchMs: number[] = [];
    for (const [i, doc] of listed.entries()) {
      const started = performance.now();
      const response = await user.call(`/collections/${collectionId}/documents/${doc.id}`, {
        method: 'PATCH',
        json: { metadata: { group: i % 10, year: 2000 + (i % 25), tags: i % 2 === 0 ? ['even'] : ['odd'] } },
      });
      if (!response.ok) throw new Error(`PATCH: ${response.status} ${await response.text()}`);
      await response.arrayBuffer();
      patchMs.push(performance.now() - started);
    }
    log(`patched ${listed.length} documents: median ${median(patchMs).toFixed(0)} ms`);

    const wall: Record<string, number[]> = {};
    const api: Record<string, number[]> = {};
    const found: Record<string, number[]> = {};
    const names = Object.keys(VARIANTS);
    for (const name of names) {
      wall[name] = [];
      api[name] = [];
      found[name] = [];
    }
    for (let round = 0; round < flags.rounds; round++) {
      for (const [q, query] of data.queries.entries()) {
        for (let v = 0; v < names.length; v++) {
          const name = names[(q + v + round) % names.length] as string;
          const filter = VARIANTS[name];
          const sent = performance.now();
          const response = await user.call('/query/search', {
            method: 'POST',
            json: { question: query.text, collection_id: collectionId, top_k: 10, ...(filter ? { filter } : {}) },
          });
          const raw = await response.text();
          const elapsed = performance.now() - sent;
          if (!response.ok) throw new Error(`search (${name}) failed: ${response.status} ${raw.slice(0, 300)}`);
          const body = JSON.parse(raw) as Schema<'SearchResponse'>;
          // The first round warms the caches (the model, the namespace, the connection pool): not counted.
          if (round === 0 && flags.rounds > 1) continue;
          wall[name]?.push(elapsed);
          api[name]?.push(body.retrieval_latency_ms);
          found[name]?.push(body.sources.length);
        }
      }
      log(`round ${round + 1}/${flags.rounds} done, load ${loadFigures()}`);
    }
    const base = { wall: median(wall.none ?? []), api: median(api.none ?? []) };
    const rows = names.map((name) => ({
      variant: name,
      filter: VARIANTS[name] ?? null,
      searches: wall[name]?.length,
      medianSources: median(found[name] ?? []),
      wallMs: { p50: Number(median(wall[name] ?? []).toFixed(1)), p99: Number(percentile(wall[name] ?? [], 99).toFixed(1)) },
      retrievalMs: { p50: median(api[name] ?? []), p99: percentile(api[name] ?? [], 99) },
      wallRatio: Number((median(wall[name] ?? []) / base.wall).toFixed(3)),
      retrievalRatio: Number((median(api[name] ?? []) / base.api).toFixed(3)),
    }));
    for (const row of rows) log(JSON.stringify(row));
    const report = {
      date: new Date().toISOString(),
      machine: { ...host, loadStart, loadEnd: loadFigures() },
      embeddings: stack.embeddings,
      docs: data.docs.length,
      queries: data.queries.length,
      rounds: flags.rounds,
      ingest: { docs: ingest.docs, chunks: ingest.chunks, wallS: ingest.wallMs / 1000 },
      patchMs: { p50: median(patchMs), p99: percentile(patchMs, 99) },
      rows,
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
