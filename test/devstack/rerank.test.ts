import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createModels } from '#core/adapters/models.ts';
import { DEFAULT_RERANK_MODEL } from '../../devstack/models/rerank-handler.ts';
import { createModelServer, defaultSharedModelsDir, type ModelServer } from '../../devstack/models/server.ts';
import { freePort } from '../../devstack/ports.ts';

// The devstack's POST /openai/v1/rerank with the shipped cross-encoder, spoken to as the API does: the AI SDK's
// rerank() through @ai-sdk/cohere (src/core/adapters/models.ts).
const apiKey = 'sk-devstack-rerank-test';
// Beside the repository, or where CI found it (.ci/run sets DEVSTACK_RERANK_MODEL for a clone elsewhere).
const weights = process.env.DEVSTACK_RERANK_MODEL || join(defaultSharedModelsDir(), DEFAULT_RERANK_MODEL);

let tmp: string;
let server: ModelServer;
let close: () => Promise<void>;
let baseURL: string;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'rerank-test-'));
  server = await createModelServer({
    apiKey,
    cacheDir: join(tmp, 'cache'),
    embeddingModel: 'off',
    textEngine: null,
    sharedModelsDir: defaultSharedModelsDir(),
    rerankModel: weights,
  });
  const app = new Hono();
  app.route('/openai', server.app);
  const port = await freePort();
  const http = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port }, () => resolve(s));
  });
  baseURL = `http://127.0.0.1:${port}/openai/v1`;
  close = async () => {
    await new Promise<void>((resolve) => http.close(() => resolve()));
    await server.close();
  };
}, 120_000);

afterAll(async () => {
  await close?.();
  await rm(tmp, { recursive: true, force: true });
});

const post = (body: unknown, key = apiKey) =>
  fetch(`${baseURL}/rerank`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });

const PASSAGES = [
  'New York City is famous for the Metropolitan Museum of Art.',
  'Berlin has a population of 3,520,031 registered inhabitants in an area of 891.82 square kilometers.',
  'The Berlin Wall fell in 1989.',
];

describe.skipIf(!existsSync(join(weights, 'onnx', 'model_quantized.onnx')))('the devstack reranker', () => {
  it('serves the shared cross-encoder and names it', () => {
    expect(server.models.rerank).toBe(DEFAULT_RERANK_MODEL);
  });

  it("ranks through the AI SDK's rerank(): every passage once, best first, scores in (0, 1)", async () => {
    const models = createModels({ apiKey, rerank: { model: DEFAULT_RERANK_MODEL, baseUrl: baseURL } });
    const ranking = await (models.rerank as NonNullable<typeof models.rerank>)('How many people live in Berlin?', PASSAGES, {});
    expect(ranking.map((r) => r.index).sort()).toEqual([0, 1, 2]);
    expect(ranking[0]?.index).toBe(1);
    const scores = ranking.map((r) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    for (const score of scores) expect(score > 0 && score < 1).toBe(true);
    expect(models.rerankEngine).toBe(`${new URL(baseURL).host}/${DEFAULT_RERANK_MODEL}`);
  });

  it("answers in Cohere's v2 shape, honours top_n, and cuts long passages to max_tokens_per_doc", async () => {
    const response = await post({ model: DEFAULT_RERANK_MODEL, query: 'Berlin population', documents: PASSAGES, top_n: 2 });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.results).toHaveLength(2);
    expect(body.results[0]).toEqual({ index: 1, relevance_score: expect.any(Number) });

    // The answer sits past the first 8 word pieces: cut there, the passage no longer holds it.
    const late = `${'filler '.repeat(40)}Berlin has 3.5 million inhabitants.`;
    const whole = await (await post({ model: DEFAULT_RERANK_MODEL, query: 'Berlin population', documents: [late] })).json();
    const cut = await (
      await post({ model: DEFAULT_RERANK_MODEL, query: 'Berlin population', documents: [late], max_tokens_per_doc: 8 })
    ).json();
    expect(cut.results[0].relevance_score).toBeLessThan(whole.results[0].relevance_score);
  });

  it('refuses a wrong key, an unknown model and an empty request in OpenAI-style errors', async () => {
    expect((await post({ model: DEFAULT_RERANK_MODEL, query: 'q', documents: ['d'] }, 'sk-wrong')).status).toBe(401);
    const unknown = await post({ model: 'rerank-v3.5', query: 'q', documents: ['d'] });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error.message).toContain(DEFAULT_RERANK_MODEL);
    const empty = await post({ model: DEFAULT_RERANK_MODEL, query: 'q', documents: [] });
    expect(empty.status).toBe(400);
    expect((await empty.json()).error.param).toBe('documents');
  });

  it('answers 503 when reranking is turned off, and the adapter reports the failure as an upstream error', async () => {
    const off = await createModelServer({
      apiKey,
      cacheDir: join(tmp, 'cache'),
      embeddingModel: 'off',
      textEngine: null,
      rerankModel: 'off',
    });
    try {
      expect(off.models.rerank).toBeUndefined();
      const response = await off.app.request('/v1/rerank', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
        body: JSON.stringify({ model: DEFAULT_RERANK_MODEL, query: 'q', documents: ['d'] }),
      });
      expect(response.status).toBe(503);
    } finally {
      await off.close();
    }
    const models = createModels({ apiKey, rerank: { model: 'no-such-reranker', baseUrl: baseURL } });
    await expect((models.rerank as NonNullable<typeof models.rerank>)('q', ['d'], {})).rejects.toMatchObject({
      name: 'UpstreamError',
    });
  });
});
