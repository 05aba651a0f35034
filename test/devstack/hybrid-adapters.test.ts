import { rm } from 'node:fs/promises';
import { serve } from '@hono/node-server';
import { FusionAlgorithm, Index, QueryMode, WeightingStrategy } from '@upstash/vector';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createModels, type Models } from '#core/adapters/models.ts';
import { createVectorStore, type VectorStore } from '#core/adapters/vectors.ts';
import { encodeDocument, encodeQuery } from '#retrieval/sparse.ts';
import { createModelServer, type ModelServer } from '../../devstack/models/server.ts';
import { freePort } from '../../devstack/ports.ts';
import { createVectorServer, type VectorServer } from '../../devstack/vector/server.ts';
import { TINY_DIMENSION, tempDirWithTinyModel } from './tiny-embedding-model.ts';

// The ingest worker's dense path, which CI cannot reach end to end without a real model:
// the production adapters (AI SDK embeddings, @upstash/vector upserts) against a HYBRID
// index and an embedding model, both served by the devstack.
let tmp: string;
let modelServer: ModelServer;
let vectorServer: VectorServer;
let close: () => Promise<void>;
let models: Models;
let vectors: VectorStore;
let index: Index;

beforeAll(async () => {
  const sandbox = await tempDirWithTinyModel('hybrid-');
  tmp = sandbox.dir;
  modelServer = await createModelServer({ apiKey: 'model-key', embeddingModel: sandbox.model, cacheDir: tmp });
  vectorServer = await createVectorServer({ token: 'vector-key', indexType: 'HYBRID', dimension: TINY_DIMENSION });
  const app = new Hono();
  app.route('/openai', modelServer.app);
  app.route('/vector', vectorServer.app);
  const port = await freePort();
  const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port });
  close = () => new Promise((resolve) => server.close(() => resolve()));
  const base = `http://127.0.0.1:${port}`;
  models = createModels({
    baseUrl: `${base}/openai/v1`,
    apiKey: 'model-key',
    embedding: { model: 'tiny-minilm' },
    vision: { model: modelServer.models.vision },
  });
  vectors = createVectorStore({ url: `${base}/vector`, token: 'vector-key' });
  index = new Index({ url: `${base}/vector`, token: 'vector-key' });
});

afterAll(async () => {
  await close?.();
  await vectorServer?.close();
  await modelServer?.close();
  await rm(tmp, { recursive: true, force: true });
});

describe('dense + sparse vectors through the production adapters', () => {
  const texts = ['the cat sat on the mat', 'a dog ran in the park', 'the dogs ran'];

  it('embeds with the model, upserts both vectors, and a hybrid query finds them', async () => {
    const dense = await (models.embed as NonNullable<Models['embed']>)(texts);
    expect(dense).toHaveLength(3);
    expect(dense.every((v) => v.length === TINY_DIMENSION)).toBe(true);
    await vectors.upsert(
      'collection-a',
      texts.map((text, i) => ({ id: `chunk-${i}`, vector: dense[i], sparseVector: encodeDocument(text), metadata: { text } })),
    );

    const stored = await index.namespace('collection-a').fetch(['chunk-0'], { includeVectors: true });
    expect(stored[0]?.vector?.map((x) => Number(x.toFixed(4)))).toEqual(dense[0]?.map((x) => Number(x.toFixed(4))));

    const [question] = await (models.embed as NonNullable<Models['embed']>)(['cat mat']);
    const results = await index.namespace('collection-a').query({
      vector: question,
      sparseVector: encodeQuery('cat mat'),
      topK: 3,
      includeMetadata: true,
      weightingStrategy: WeightingStrategy.IDF,
      fusionAlgorithm: FusionAlgorithm.RRF,
    });
    expect(results[0]?.id).toBe('chunk-0');

    const sparseOnly = await index.namespace('collection-a').query({
      sparseVector: encodeQuery('dogs'),
      topK: 3,
      queryMode: QueryMode.SPARSE,
      weightingStrategy: WeightingStrategy.IDF,
    });
    // Stemming makes "dogs" and "dog" one term.
    expect(sparseOnly.map((r) => r.id).sort()).toEqual(['chunk-1', 'chunk-2']);
  });

  it('deletes by id and purges a namespace', async () => {
    await vectors.delete('collection-a', ['chunk-2']);
    expect(await index.namespace('collection-a').fetch(['chunk-2'])).toEqual([null]);
    await vectors.deleteNamespace('collection-a');
    expect(await index.listNamespaces()).not.toContain('collection-a');
    // Purging a namespace that never existed is not an error: a collection may have no documents.
    await vectors.deleteNamespace('never-written');
  });
});
