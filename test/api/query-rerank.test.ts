import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { api, db, type Schema } from '../support/client.ts';
import { type Cast, castUsers, sharedCollection } from '../support/fixtures.ts';
import { clearFaults, ingestFile, injectFault } from '../support/ingest.ts';
import { askQuestion, dataOf } from '../support/sse.ts';

// Reranking through the real API worker and the devstack's cross-encoder (POST /openai/v1/rerank, Cohere's
// shape). Faults match the rerank path only, so no other test's embeddings or answers are touched.
const RERANK_PATH = '/v1/rerank';
// The API's default time budget (src/retrieval/rerank.ts, DEFAULT_RERANK_BUDGET_MS).
const BUDGET_MS = 2000;

let cast: Cast;
let collectionId: string;

// Short sections, each its own chunk, so that reranking them takes milliseconds even on a busy machine.
const NOTES = `# Field notes

## Tides

A tidal barrage is a dam across an estuary: water flows through turbines as the tide rises and falls.

## Bees

Honey bees communicate the direction of flowers with a waggle dance inside the hive.

## Volcanoes

Basaltic lava is runny because it holds little silica, so gas escapes and eruptions are gentle.

## Glaciers

A glacier moves because ice deforms under its own weight and slides on meltwater at its bed.
`;

beforeAll(async () => {
  cast = await castUsers();
  ({ collectionId } = await sharedCollection(cast, 'Rerank'));
  const job = await ingestFile(cast.owner.token, 'field-notes.md', collectionId, NOTES);
  expect(job.status, job.error_message ?? '').toBe('succeeded');
}, 120_000);

afterEach(() => clearFaults());

const search = (body: Record<string, unknown>) =>
  api('POST', '/query/search', { token: cast.memberQuery.token, body: { collection_id: collectionId, ...body } });
const ids = (sources: Schema<'Source'>[]) => sources.map((s) => `${s.document_id}:${s.chunk_index}`);

describe('reranking', () => {
  it('is off by default: no reranker call, and every rerank_score is null', async () => {
    const response = await search({ question: 'How do honey bees tell each other where flowers are?' });
    expect(response.status).toBe(200);
    expect(response.body.rerank).toEqual({ applied: false, reason: 'off', candidates: null, latency_ms: null });
    expect(response.body.sources.length).toBeGreaterThan(0);
    for (const source of response.body.sources) expect(source.rerank_score).toBeNull();
  });

  it('reranks on request: each reranked source has a score in (0, 1), and the relevant passage comes first', async () => {
    const response = await search({ question: 'How do honey bees tell each other where flowers are?', rerank: true, top_k: 4 });
    expect(response.status).toBe(200);
    expect(response.body.rerank).toMatchObject({ applied: true, reason: null, candidates: expect.any(Number) });
    expect(response.body.rerank.candidates).toBeGreaterThanOrEqual(response.body.sources.length);
    expect(Number.isInteger(response.body.rerank.latency_ms)).toBe(true);
    const [top] = response.body.sources;
    expect(top?.text).toMatch(/waggle dance/);
    for (const source of response.body.sources) {
      expect(source.rerank_score).toBeGreaterThan(0);
      expect(source.rerank_score).toBeLessThan(1);
    }
    // The cross-encoder tells the bees passage from the others by far.
    const others = response.body.sources.slice(1).map((s) => s.rerank_score ?? 0);
    expect(top?.rerank_score).toBeGreaterThan(Math.max(...others));
  });

  it('follows the collection: rerank and rerank_candidates in its config, which a request can turn off', async () => {
    const put = await api('PUT', `/collections/${collectionId}/config`, {
      token: cast.admin.token,
      body: { chunk_size: 1000, retrieval_strategy: 'similarity', rerank: true, rerank_candidates: 2 },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toMatchObject({ rerank: true, rerank_candidates: 2 });
    try {
      const on = await search({ question: 'Why are basaltic eruptions gentle?', top_k: 4 });
      expect(on.body.rerank).toMatchObject({ applied: true, candidates: 2 });
      // Only the two best fused candidates were reranked; the rest follow in their fused order, unscored.
      const scored = on.body.sources.filter((s: { rerank_score: number | null }) => s.rerank_score !== null);
      expect(scored).toHaveLength(2);
      expect(on.body.sources.slice(0, 2)).toEqual(scored);

      const off = await search({ question: 'Why are basaltic eruptions gentle?', top_k: 4, rerank: false });
      expect(off.body.rerank).toMatchObject({ applied: false, reason: 'off' });
    } finally {
      await api('PUT', `/collections/${collectionId}/config`, {
        token: cast.admin.token,
        body: { chunk_size: 1000, retrieval_strategy: 'similarity' },
      });
    }
    const reset = await api('GET', `/collections/${collectionId}/config`, { token: cast.admin.token });
    expect(reset.body).toMatchObject({ rerank: false, rerank_candidates: 10 });
  });

  it('refuses a candidate count outside 1–50, and a rerank that is not a boolean, with 422', async () => {
    for (const rerank_candidates of [0, 51, 2.5]) {
      const put = await api('PUT', `/collections/${collectionId}/config`, {
        token: cast.admin.token,
        body: { chunk_size: 1000, retrieval_strategy: 'similarity', rerank_candidates },
      });
      expect(put.status).toBe(422);
    }
    const bad = await search({ question: 'glaciers', rerank: 'yes' });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body)).toMatch(/rerank/);
  });

  it('goes on with the fused order when the reranker fails, and says so', async () => {
    const question = 'What makes a glacier move?';
    const fused = await search({ question, top_k: 4 });
    await injectFault('models', { status: 500, match: RERANK_PATH });
    const response = await search({ question, top_k: 4, rerank: true });
    expect(response.status).toBe(200);
    expect(response.body.rerank).toMatchObject({ applied: false, reason: 'the reranker failed', candidates: null });
    expect(ids(response.body.sources)).toEqual(ids(fused.body.sources));
    for (const source of response.body.sources) expect(source.rerank_score).toBeNull();
    // Nothing of the upstream's reply reaches the client.
    expect(JSON.stringify(response.body.rerank)).not.toMatch(/injected|500|unavailable/);

    // The answer too: its metadata event says so, and the answer streams to its end.
    const { events } = await askQuestion(cast.memberQuery.token, { question, collection_id: collectionId, rerank: true });
    expect(events[0]?.event).toBe('metadata');
    expect(dataOf(events, 'metadata')?.rerank).toMatchObject({ applied: false, reason: 'the reranker failed' });
    expect(events.at(-1)?.event).toBe('done');
  });

  it('goes on with the fused order when the reranker takes longer than its time budget', async () => {
    const question = 'What is a tidal barrage?';
    const fused = await search({ question, top_k: 4 });
    await injectFault('models', { delayMs: BUDGET_MS + 1500, match: RERANK_PATH });
    const started = performance.now();
    const response = await search({ question, top_k: 4, rerank: true });
    const took = performance.now() - started;
    expect(response.status).toBe(200);
    expect(response.body.rerank).toMatchObject({ applied: false, reason: `the reranker took longer than ${BUDGET_MS} ms` });
    expect(response.body.rerank.latency_ms).toBeGreaterThanOrEqual(BUDGET_MS - 50);
    // The question did not wait for the slow reply.
    expect(took).toBeLessThan(BUDGET_MS + 1500);
    expect(ids(response.body.sources)).toEqual(ids(fused.body.sources));
  });

  it('keeps the rerank latency in the evaluation record, beside the retrieval latency', async () => {
    const question = 'How do bees dance?';
    const { events } = await askQuestion(cast.memberQuery.token, { question, collection_id: collectionId, rerank: true });
    expect(dataOf(events, 'metadata')?.rerank.applied).toBe(true);
    const sql = db();
    const rows = await (async () => {
      for (let i = 0; i < 50; i++) {
        const found = await sql`select retrieval_latency_ms, rerank_latency_ms, sources from evaluations
                                 where collection_id = ${collectionId} and question = ${question}`;
        if (found.length > 0) return found;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return [];
    })();
    expect(rows).toHaveLength(1);
    expect(rows[0]?.rerank_latency_ms).toBe(dataOf(events, 'metadata')?.rerank.latency_ms);
    expect(Number.isInteger(rows[0]?.retrieval_latency_ms)).toBe(true);
    const sources = (rows[0]?.sources ?? []) as { rerank_score: number | null }[];
    expect(sources[0]?.rerank_score).toBeGreaterThan(0);

    const unreranked = 'How do bees dance, without reranking?';
    await askQuestion(cast.memberQuery.token, { question: unreranked, collection_id: collectionId });
    for (let i = 0; i < 50; i++) {
      const [row] = await sql`select rerank_latency_ms from evaluations where question = ${unreranked}`;
      if (row) {
        expect(row.rerank_latency_ms).toBeNull();
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('the unreranked answer was never recorded');
  });
});
