import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { FusionAlgorithm, Index, QueryMode, WeightingStrategy } from '@upstash/vector';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NamespaceStore } from '../../devstack/vector/namespace.ts';
import { createVectorServer, defaultHnsw, type VectorOptions, type VectorServer } from '../../devstack/vector/server.ts';
import type { VectorQuery } from '../../devstack/vector/types.ts';
import { seededRandom } from '../support/seeded-random.ts';

const token = 'vector-test-token';
const readonlyToken = 'vector-test-readonly';

interface Running {
  url: string;
  vector: VectorServer;
  index(secret?: string): Index;
  stop(): Promise<void>;
}

/** Serves a vector server under /vector on a free loopback port, as the devstack mounts it. */
async function start(options: Partial<VectorOptions> & Pick<VectorOptions, 'indexType'>): Promise<Running> {
  const vector = await createVectorServer({ token, readonlyToken, ...options });
  const root = new Hono().route('/vector', vector.app);
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const listening = serve({ fetch: root.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(listening));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/vector`;
  return {
    url,
    vector,
    index: (secret = token) => new Index({ url, token: secret, retry: false, enableTelemetry: false }),
    stop: async () => {
      await vector.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const ids = (results: { id: string | number }[]) => results.map((result) => String(result.id));
const sorted = (values: string[]) => [...values].sort();

describe('dense index', () => {
  let running: Running;
  let index: Index;
  beforeAll(async () => {
    running = await start({ indexType: 'DENSE', dimension: 2 });
    index = running.index();
  });
  afterAll(() => running.stop());

  it('upserts one or many, and fetches them back with the parts asked for', async () => {
    const ns = index.namespace('basics');
    expect(await ns.upsert({ id: 'a', vector: [0.1, 0.2], metadata: { kind: 'first' }, data: 'raw a' })).toBe('Success');
    expect(
      await ns.upsert([
        { id: 7, vector: [0.3, 0.4] },
        { id: 'c', vector: [0.5, 0.6], metadata: { kind: 'third' } },
      ]),
    ).toBe('Success');

    const full = await ns.fetch(['a', '7', 'missing'], { includeMetadata: true, includeVectors: true, includeData: true });
    // Stored as 32-bit floats, answered with the shortest decimal that reads back the same.
    expect(full).toEqual([
      { id: 'a', vector: [0.1, 0.2], metadata: { kind: 'first' }, data: 'raw a' },
      { id: '7', vector: [0.3, 0.4] },
      null,
    ]);
    expect(await ns.fetch(['c'])).toEqual([{ id: 'c' }]);
    expect(sorted(ids((await ns.fetch({ prefix: 'a' })) as { id: string }[]))).toEqual(['a']);
  });

  it('scores cosine similarity as (1 + cos) / 2, best first', async () => {
    const ns = index.namespace('cosine');
    await ns.upsert([
      { id: 'same', vector: [2, 0] },
      { id: 'orthogonal', vector: [0, 3] },
      { id: 'opposite', vector: [-1, 0] },
      { id: 'diagonal', vector: [1, 1] },
    ]);
    const results = await ns.query({ vector: [1, 0], topK: 4, includeVectors: true });
    expect(ids(results)).toEqual(['same', 'diagonal', 'orthogonal', 'opposite']);
    const scores = results.map((result) => result.score);
    [1, (1 + Math.SQRT1_2) / 2, 0.5, 0].forEach((expected, i) => {
      expect(scores[i]).toBeCloseTo(expected, 5);
    });
    expect(results[0]).toMatchObject({ vector: [2, 0] });
    expect(results[0]).not.toHaveProperty('metadata');
    expect(await ns.query({ vector: [1, 0], topK: 2 })).toHaveLength(2);
  });

  it('refuses vectors of the wrong dimension as Upstash does', async () => {
    await expect(index.upsert({ id: 'x', vector: [1, 2, 3] })).rejects.toThrow('Invalid vector dimension: 3, expected: 2');
    await expect(index.query({ vector: [1], topK: 1 })).rejects.toThrow('Invalid vector dimension: 1, expected: 2');
    const raw = await fetch(`${running.url}/upsert`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: JSON.stringify({ id: 'x', vector: [1] }),
    });
    expect(raw.status).toBe(422);
    expect(await raw.json()).toEqual({ error: 'Invalid vector dimension: 1, expected: 2', status: 422 });
  });

  it('refuses sparse vectors, text data and malformed writes with clear errors', async () => {
    await expect(index.upsert({ id: 's', vector: [1, 0], sparseVector: { indices: [1], values: [1] } })).rejects.toThrow(
      'sparseVector is not allowed on a dense index',
    );
    const missing = await fetch(`${running.url}/upsert`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: JSON.stringify({ id: 's', metadata: { no: 'vector' } }),
    });
    expect(await missing.json()).toEqual({ error: 'upsert: vector is required on a dense index', status: 400 });
    await expect(index.upsert({ id: 'd', data: 'some text' })).rejects.toThrow(/must be created with an embedding model/);
    await expect(index.query({ data: 'some text', topK: 1 })).rejects.toThrow(/must be created with an embedding model/);
    await expect(index.upsert({ id: '', vector: [1, 0] })).rejects.toThrow('id must be a non-empty string or a number');
    await expect(index.query({ vector: [1, 0], topK: 0 })).rejects.toThrow('topK must be an integer between 1 and 1000');
    const raw = await fetch(`${running.url}/upsert`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: '{',
    });
    expect(raw.status).toBe(400);
    expect(await raw.json()).toEqual({ error: 'The request body is not valid JSON', status: 400 });
  });

  it('updates metadata by overwrite or merge patch, and vectors in place', async () => {
    const ns = index.namespace('update');
    await ns.upsert([
      { id: 'u', vector: [1, 0], metadata: { a: 1, nested: { keep: true, drop: 1 } } },
      { id: 'v', vector: [0.9, 0.1] },
    ]);
    expect(await ns.update({ id: 'u', metadata: { b: 2, nested: { drop: null } }, metadataUpdateMode: 'PATCH' })).toEqual({
      updated: 1,
    });
    expect((await ns.fetch(['u'], { includeMetadata: true }))[0]?.metadata).toEqual({ a: 1, b: 2, nested: { keep: true } });
    await ns.update({ id: 'u', metadata: { only: 'this' } });
    expect((await ns.fetch(['u'], { includeMetadata: true }))[0]?.metadata).toEqual({ only: 'this' });

    expect(ids(await ns.query({ vector: [0, 1], topK: 1 }))).toEqual(['v']);
    await ns.update({ id: 'u', vector: [0, 1] });
    const [best] = await ns.query({ vector: [0, 1], topK: 1, includeMetadata: true, includeVectors: true });
    expect(best).toEqual({ id: 'u', score: 1, vector: [0, 1], metadata: { only: 'this' } });

    expect(await ns.update({ id: 'nobody', metadata: { a: 1 } })).toEqual({ updated: 0 });
    await expect(ns.update({ id: 'u', vector: [1, 2, 3] })).rejects.toThrow('Invalid vector dimension');
  });

  it('deletes by id, prefix and filter, and deleted vectors are gone everywhere', async () => {
    const ns = index.namespace('delete');
    await ns.upsert(
      Array.from({ length: 8 }, (_, i) => ({ id: `${i < 4 ? 'keep' : 'tmp'}-${i}`, vector: [1, i / 10], metadata: { i } })),
    );
    const countIn = async () => (await index.info()).namespaces.delete?.vectorCount;
    expect(await countIn()).toBe(8);

    expect(await ns.delete('keep-0')).toEqual({ deleted: 1 });
    expect(await ns.delete(['keep-1', 'keep-1', 'not-there'])).toEqual({ deleted: 1 });
    expect(await ns.delete({ prefix: 'tmp-' })).toEqual({ deleted: 4 });
    expect(await ns.delete({ filter: 'i = 3' })).toEqual({ deleted: 1 });
    expect(await ns.delete('keep-0')).toEqual({ deleted: 0 });
    expect(await countIn()).toBe(1);

    expect(ids(await ns.query({ vector: [1, 0], topK: 10 }))).toEqual(['keep-2']);
    expect(await ns.fetch(['keep-0', 'tmp-5', 'keep-2'])).toEqual([null, null, { id: 'keep-2' }]);
    expect(ids((await ns.range({ cursor: 0, limit: 10 })).vectors)).toEqual(['keep-2']);
  });

  it('ranges in pages that survive deletes between them, with a prefix and includes', async () => {
    const ns = index.namespace('range');
    await ns.upsert(Array.from({ length: 10 }, (_, i) => ({ id: `r${i}`, vector: [1, i], metadata: { i } })));
    await ns.upsert({ id: 'other', vector: [0, 1] });

    const first = await ns.range({ cursor: 0, limit: 4, includeMetadata: true });
    expect(first.vectors).toEqual([0, 1, 2, 3].map((i) => ({ id: `r${i}`, metadata: { i } })));
    expect(first.nextCursor).not.toBe('');
    await ns.delete('r4');
    const second = await ns.range({ cursor: first.nextCursor, limit: 4 });
    expect(ids(second.vectors)).toEqual(['r5', 'r6', 'r7', 'r8']);
    const third = await ns.range({ cursor: second.nextCursor, limit: 4 });
    expect(ids(third.vectors)).toEqual(['r9', 'other']);
    expect(third.nextCursor).toBe('');

    const prefixed = await ns.range({ cursor: 0, limit: 100, prefix: 'r', includeVectors: true });
    expect(prefixed.vectors).toHaveLength(9);
    expect(prefixed.vectors[0]).toEqual({ id: 'r0', vector: [1, 0] });
    await expect(ns.range({ cursor: 'garbage', limit: 4 })).rejects.toThrow(/invalid cursor/);
  });

  it('answers a batch of queries with one list per query', async () => {
    const ns = index.namespace('batch');
    await ns.upsert([
      { id: 'x', vector: [1, 0] },
      { id: 'y', vector: [0, 1] },
    ]);
    const many = await index.queryMany(
      [
        { vector: [1, 0], topK: 1 },
        { vector: [0, 1], topK: 2 },
      ],
      { namespace: 'batch' },
    );
    expect(many.map(ids)).toEqual([['x'], ['y', 'x']]);
    const single = await index.queryMany([{ vector: [0, 1], topK: 1 }], { namespace: 'batch' });
    expect(single.map(ids)).toEqual([['y']]);
  });

  it('continues a resumable query where it stopped', async () => {
    const ns = index.namespace('resumable');
    await ns.upsert(Array.from({ length: 6 }, (_, i) => ({ id: `q${i}`, vector: [1, i] })));
    const { result, fetchNext, stop } = await ns.resumableQuery({ vector: [1, 0], topK: 2, maxIdle: 60 });
    expect(ids(result)).toEqual(['q0', 'q1']);
    const next = await fetchNext(3);
    expect(ids(next)).toEqual(['q2', 'q3', 'q4']);
    expect(next[0]!.score).toBeLessThanOrEqual(result[1]!.score);
    expect(await stop()).toBe('Success');
    expect(() => fetchNext(1)).toThrow(/stopped/);
  });

  it('keeps namespaces apart, lists them and deletes them', async () => {
    const one = index.namespace('iso-one');
    const two = index.namespace('iso-two');
    await one.upsert({ id: 'shared', vector: [1, 0], metadata: { owner: 'one' } });
    await two.upsert([
      { id: 'shared', vector: [0, 1], metadata: { owner: 'two' } },
      { id: 'only-two', vector: [1, 1] },
    ]);
    expect(await one.fetch(['shared', 'only-two'], { includeMetadata: true })).toEqual([
      { id: 'shared', metadata: { owner: 'one' } },
      null,
    ]);
    expect(ids(await one.query({ vector: [0, 1], topK: 10 }))).toEqual(['shared']);
    expect(ids(await two.query({ vector: [0, 1], topK: 10 }))).toEqual(['shared', 'only-two']);
    expect(await index.fetch(['shared'])).toEqual([null]);

    await two.reset();
    expect(await two.fetch(['shared'])).toEqual([null]);
    expect(await one.fetch(['shared'])).toEqual([{ id: 'shared' }]);

    const names = await index.listNamespaces();
    expect(names).toEqual(expect.arrayContaining(['', 'iso-one', 'iso-two']));
    expect(await index.deleteNamespace('iso-one')).toBe('Success');
    expect(await index.listNamespaces()).not.toContain('iso-one');
    expect(await one.fetch(['shared'])).toEqual([null]);
    await expect(index.deleteNamespace('iso-one')).rejects.toThrow('Namespace iso-one for the index devstack does not exist');
    await expect(index.deleteNamespace('')).rejects.toThrow('The default namespace cannot be deleted');
  });

  it('reports the index shape and per-namespace counts', async () => {
    await index.namespace('info').upsert([
      { id: 'i1', vector: [1, 0] },
      { id: 'i2', vector: [0, 1] },
    ]);
    const info = await index.info();
    expect(info).toMatchObject({
      pendingVectorCount: 0,
      dimension: 2,
      similarityFunction: 'COSINE',
      denseIndex: { dimension: 2, similarityFunction: 'COSINE' },
    });
    expect(info).not.toHaveProperty('sparseIndex');
    expect(info.namespaces.info).toEqual({ vectorCount: 2, pendingVectorCount: 0 });
    expect(info.vectorCount).toBe(Object.values(info.namespaces).reduce((sum, ns) => sum + ns.vectorCount, 0));
    expect(info.indexSize).toBeGreaterThan(0);
  });

  it('requires the bearer token, and a read-only token only reads', async () => {
    await expect(running.index('wrong').info()).rejects.toThrow('Unauthorized: Invalid auth token');
    const raw = await fetch(`${running.url}/info`);
    expect(raw.status).toBe(401);
    expect(await raw.json()).toEqual({ error: 'Unauthorized: Invalid auth token', status: 401 });

    const reader = running.index(readonlyToken);
    expect(await reader.query({ vector: [1, 0], topK: 1 })).toBeInstanceOf(Array);
    await expect(reader.upsert({ id: 'r', vector: [1, 0] })).rejects.toThrow('Forbidden: a read-only token cannot run upsert');
    await expect(reader.reset({ all: true })).rejects.toThrow(/read-only/);
  });
});

describe('metadata filters', () => {
  let running: Running;
  let ns: ReturnType<Index['namespace']>;
  const cities: Record<string, Record<string, unknown> | undefined> = {
    istanbul: {
      city: 'Istanbul',
      country: 'Turkey',
      is_capital: false,
      population: 15460000,
      geography: { continent: 'Asia', coordinates: { latitude: 41.0082, longitude: 28.9784 } },
      economy: { currency: 'TRY', major_industries: ['Tourism', 'Textiles', 'Finance'] },
    },
    ankara: {
      city: 'Ankara',
      country: 'Turkey',
      is_capital: true,
      population: 5700000,
      geography: { continent: 'Asia' },
      economy: { currency: 'TRY', major_industries: ['Government', 'Defense'] },
    },
    berlin: {
      city: 'Berlin',
      country: 'Germany',
      is_capital: true,
      population: 3600000,
      geography: { continent: 'Europe', coordinates: { latitude: 52.52, longitude: 13.405 } },
      economy: { currency: 'EUR', major_industries: ['Tech', 'Tourism'] },
    },
    paris: {
      city: 'Paris',
      country: 'France',
      is_capital: true,
      population: 2100000,
      economy: { currency: 'EUR', major_industries: ['Fashion', 'Tourism', 'Finance'] },
    },
    nowhere: undefined,
  };

  beforeAll(async () => {
    running = await start({ indexType: 'DENSE', dimension: 2 });
    ns = running.index().namespace('cities');
    await ns.upsert(
      Object.entries(cities).map(([id, metadata], i) => ({ id, vector: [1, i], ...(metadata ? { metadata } : {}) })),
    );
  });
  afterAll(() => running.stop());

  it.each([
    ["country = 'Turkey'", ['ankara', 'istanbul']],
    ['country = "Turkey"', ['ankara', 'istanbul']],
    ["country = 'turkey'", []],
    ["country != 'Germany'", ['ankara', 'istanbul', 'paris']],
    ['population >= 5700000', ['ankara', 'istanbul']],
    ['population > 5700000', ['istanbul']],
    ['population < 3600000', ['paris']],
    ['population <= 3600000', ['berlin', 'paris']],
    ['is_capital = true', ['ankara', 'berlin', 'paris']],
    ['is_capital = FALSE', ['istanbul']],
    ['is_capital = 0', ['istanbul']],
    ["city GLOB '?[sz]*[^m-z]'", ['istanbul']],
    ["city NOT GLOB 'A*'", ['berlin', 'istanbul', 'paris']],
    ["country IN ('Germany', 'France')", ['berlin', 'paris']],
    ["economy.currency NOT IN ('USD', 'EUR')", ['ankara', 'istanbul']],
    ["economy.major_industries CONTAINS 'Tourism'", ['berlin', 'istanbul', 'paris']],
    ["economy.major_industries NOT CONTAINS 'Tourism'", ['ankara']],
    ["economy.major_industries[0] = 'Tourism'", ['istanbul']],
    ["economy.major_industries[#-1] = 'Finance'", ['istanbul', 'paris']],
    ['geography.coordinates.latitude >= 45.0', ['berlin']],
    ['HAS FIELD geography.coordinates', ['berlin', 'istanbul']],
    ['has not field geography', ['nowhere', 'paris']],
    // AND binds tighter than OR.
    ["country = 'Turkey' OR country = 'Germany' AND is_capital = false", ['ankara', 'istanbul']],
    ["(country = 'Turkey' OR country = 'Germany') AND is_capital = false", ['istanbul']],
    ["country = 'Turkey' and population > 10000000", ['istanbul']],
  ])('%s', async (filter, expected) => {
    const results = await ns.query({ vector: [1, 0], topK: 10, filter });
    expect(sorted(ids(results))).toEqual(expected);
  });

  it.each([
    "country = 'Turkey",
    'country =',
    "country == 'Turkey'",
    "population > 'big'",
    "(country = 'Turkey'",
    "country LIKE 'T%'",
    'city GLOB 5',
    "= 'Turkey'",
    "country = 'Turkey' AND",
    'economy..currency = 1',
  ])('rejects %s with a 400', async (filter) => {
    await expect(ns.query({ vector: [1, 0], topK: 10, filter })).rejects.toThrow(/^Invalid filter: /);
    const raw = await fetch(`${running.url}/query/cities`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: JSON.stringify({ vector: [1, 0], filter }),
    });
    expect(raw.status).toBe(400);
  });

  it('finds topK matches however selective the filter, as exact search does', async () => {
    const big = running.index().namespace('selective');
    const dimension = 2;
    // Seeded, so failures reproduce.
    const random = seededRandom(7);
    const vectors = Array.from({ length: 12_000 }, () => Array.from({ length: dimension }, () => random() - 0.5));
    for (let start = 0; start < vectors.length; start += 2000) {
      await big.upsert(
        vectors.slice(start, start + 2000).map((vector, i) => {
          const n = start + i;
          return { id: `s${n}`, vector, metadata: { rare: n % 500 === 0, half: n % 2 === 0 } };
        }),
      );
    }
    const query = [0.3, -0.2];
    const cosine = (v: number[]) => (v[0]! * query[0]! + v[1]! * query[1]!) / Math.hypot(v[0]!, v[1]!) / Math.hypot(...query);
    const exactTop = (keep: (n: number) => boolean) =>
      vectors
        .map((vector, n) => ({ id: `s${n}`, score: cosine(vector), n }))
        .filter(({ n }) => keep(n))
        .sort((a, b) => b.score - a.score)
        .slice(0, 10);

    for (const [filter, keep] of [
      ['rare = true', (n: number) => n % 500 === 0],
      ['half = true', (n: number) => n % 2 === 0],
    ] as const) {
      const results = await big.query({ vector: query, topK: 10, filter, includeMetadata: true });
      expect(results).toHaveLength(10);
      const expected = exactTop(keep);
      // Scores, not ids: in two dimensions many vectors tie.
      results.forEach((result, i) => {
        expect(result.score).toBeCloseTo((1 + expected[i]!.score) / 2, 4);
      });
    }
  });
});

describe('other similarity functions', () => {
  it('scores EUCLIDEAN as 1 / (1 + squared distance) and DOT_PRODUCT as (1 + dot) / 2', async () => {
    const euclidean = await start({ indexType: 'DENSE', dimension: 2, similarityFunction: 'EUCLIDEAN' });
    const dot = await start({ indexType: 'DENSE', dimension: 2, similarityFunction: 'DOT_PRODUCT' });
    try {
      await euclidean.index().upsert([
        { id: 'near', vector: [1, 1] },
        { id: 'far', vector: [4, 0] },
      ]);
      const byDistance = await euclidean.index().query({ vector: [1, 0], topK: 2 });
      expect(ids(byDistance)).toEqual(['near', 'far']);
      expect(byDistance[0]!.score).toBeCloseTo(1 / 2, 6);
      expect(byDistance[1]!.score).toBeCloseTo(1 / 10, 6);
      expect((await euclidean.index().info()).similarityFunction).toBe('EUCLIDEAN');

      await dot.index().upsert([
        { id: 'along', vector: [0.5, 0] },
        { id: 'against', vector: [-0.5, 0] },
      ]);
      const byDot = await dot.index().query({ vector: [1, 0], topK: 2 });
      expect(byDot.map((result) => [result.id, result.score])).toEqual([
        ['along', 0.75],
        ['against', 0.25],
      ]);
    } finally {
      await euclidean.stop();
      await dot.stop();
    }
  });
});

describe('sparse index', () => {
  let running: Running;
  let index: Index;
  beforeAll(async () => {
    running = await start({ indexType: 'SPARSE' });
    index = running.index();
    await index.upsert([
      { id: 'x', sparseVector: { indices: [1], values: [0.9] }, metadata: { group: 'a' } },
      { id: 'y', sparseVector: { indices: [1, 2], values: [0.1, 0.5] }, metadata: { group: 'b' } },
      { id: 'z', sparseVector: { indices: [1], values: [0.5] }, metadata: { group: 'a' } },
      { id: 'w', sparseVector: { indices: [1, 3], values: [0.4, 1] }, metadata: { group: 'b' } },
    ]);
  });
  afterAll(() => running.stop());

  it('refuses dense vectors', async () => {
    await expect(index.upsert({ id: 'd', vector: [1, 2] })).rejects.toThrow('vector is not allowed on a sparse index');
    await expect(index.query({ vector: [1, 2], topK: 1 })).rejects.toThrow('vector is not allowed on a sparse index');
    await expect(index.upsert({ id: 'bad', sparseVector: { indices: [1, 1], values: [1, 2] } })).rejects.toThrow(
      'sparseVector has duplicate index 1',
    );
  });

  it('scores by the inner product over shared dimensions, exactly, and skips vectors sharing none', async () => {
    const results = await index.query({ sparseVector: { indices: [1, 2], values: [1, 1] }, topK: 10, includeVectors: true });
    expect(ids(results)).toEqual(['x', 'y', 'z', 'w']);
    [0.9, 0.6, 0.5, 0.4].forEach((expected, i) => {
      expect(results[i]!.score).toBeCloseTo(expected, 6);
    });
    expect(results[1]!.sparseVector).toEqual({ indices: [1, 2], values: [0.1, 0.5] });
    expect(await index.query({ sparseVector: { indices: [99], values: [1] }, topK: 10 })).toEqual([]);
    expect(ids(await index.query({ sparseVector: { indices: [1], values: [1] }, topK: 10, filter: "group = 'b'" }))).toEqual([
      'w',
      'y',
    ]);
  });

  it('weights query values by IDF = ln((N - n + 0.5) / (n + 0.5) + 1), favouring rare dimensions', async () => {
    const idf = (n: number) => Math.log((4 - n + 0.5) / (n + 0.5) + 1);
    const results = await index.query({
      sparseVector: { indices: [1, 2], values: [1, 1] },
      topK: 2,
      weightingStrategy: WeightingStrategy.IDF,
    });
    // Unweighted, x (0.9) beats y (0.6); dimension 1 is in all four vectors, dimension 2 in one.
    expect(ids(results)).toEqual(['y', 'x']);
    expect(results[0]!.score).toBeCloseTo(0.1 * idf(4) + 0.5 * idf(1), 5);
    expect(results[1]!.score).toBeCloseTo(0.9 * idf(4), 5);
  });

  it('reports no dense part in info', async () => {
    const info = await index.info();
    expect(info).toMatchObject({ vectorCount: 4, dimension: 0, sparseIndex: {} });
    expect(info).not.toHaveProperty('denseIndex');
  });
});

describe('hybrid index', () => {
  let running: Running;
  let index: Index;
  // Dense: a (cos 1) > b (0.8) > d (0.6) > c (0); sparse on dimension 1: c (3) > b (2) > a (1), d none.
  const denseScores = { a: 1, b: 0.9, d: 0.8, c: 0.5 };
  const sparseScores = { c: 3, b: 2, a: 1 };
  const query = { vector: [1, 0], sparseVector: { indices: [1], values: [1] }, topK: 4 };

  beforeAll(async () => {
    running = await start({ indexType: 'HYBRID', dimension: 2 });
    index = running.index();
    await index.upsert([
      { id: 'a', vector: [1, 0], sparseVector: { indices: [1], values: [1] } },
      { id: 'b', vector: [0.8, 0.6], sparseVector: { indices: [1], values: [2] } },
      { id: 'c', vector: [0, 1], sparseVector: { indices: [1], values: [3] } },
      { id: 'd', vector: [0.6, 0.8], sparseVector: { indices: [2], values: [5] } },
    ]);
  });
  afterAll(() => running.stop());

  it('needs both vector parts on upsert, and both or neither on update', async () => {
    await expect(index.upsert({ id: 'e', vector: [1, 0] })).rejects.toThrow('a hybrid index needs both vector and sparseVector');
    await expect(index.upsert({ id: 'e', sparseVector: { indices: [1], values: [1] } })).rejects.toThrow(
      'a hybrid index needs both vector and sparseVector',
    );
    await expect(index.update({ id: 'a', vector: [0, 1] })).rejects.toThrow(/together, or neither/);
  });

  it('queries one part alone when given one, or by queryMode', async () => {
    const dense = await index.query({ vector: [1, 0], topK: 4 });
    expect(ids(dense)).toEqual(['a', 'b', 'd', 'c']);
    Object.values(denseScores).forEach((score, i) => {
      expect(dense[i]!.score).toBeCloseTo(score, 6);
    });
    const sparse = await index.query({ sparseVector: query.sparseVector, topK: 4 });
    expect(sparse.map((result) => [result.id, result.score])).toEqual(Object.entries(sparseScores));
    expect(ids(await index.query({ ...query, queryMode: QueryMode.SPARSE }))).toEqual(['c', 'b', 'a']);
    expect(ids(await index.query({ ...query, queryMode: QueryMode.DENSE }))).toEqual(['a', 'b', 'd', 'c']);
  });

  it('fuses by reciprocal rank, 1 / (60 + rank), by default', async () => {
    const expected = {
      a: 1 / 61 + 1 / 63,
      b: 1 / 62 + 1 / 62,
      c: 1 / 64 + 1 / 61,
      d: 1 / 63,
    };
    for (const results of [await index.query(query), await index.query({ ...query, fusionAlgorithm: FusionAlgorithm.RRF })]) {
      expect(ids(results)).toEqual(['a', 'b', 'c', 'd']);
      for (const result of results) expect(result.score).toBeCloseTo(expected[result.id as keyof typeof expected], 9);
    }
  });

  it('fuses by score distribution, each list scaled over mean ± 3 sd, with DBSF', async () => {
    const scale = (scores: Record<string, number>) => {
      const values = Object.values(scores);
      const mean = values.reduce((sum, x) => sum + x, 0) / values.length;
      const sd = Math.sqrt(values.reduce((sum, x) => sum + (x - mean) ** 2, 0) / values.length);
      return Object.fromEntries(Object.entries(scores).map(([id, s]) => [id, (s - (mean - 3 * sd)) / (6 * sd)]));
    };
    const dense = scale(denseScores);
    const sparse = scale(sparseScores);
    const expected: Record<string, number> = {
      a: dense.a! + sparse.a!,
      b: dense.b! + sparse.b!,
      c: dense.c! + sparse.c!,
      d: dense.d!,
    };
    const results = await index.query({ ...query, fusionAlgorithm: FusionAlgorithm.DBSF });
    // Unlike RRF, b's two good scores beat a's best dense score.
    expect(ids(results)).toEqual(['b', 'a', 'c', 'd']);
    for (const result of results) expect(result.score).toBeCloseTo(expected[result.id as string]!, 5);
  });

  it('returns both vector parts when asked', async () => {
    const [a] = await index.fetch(['a'], { includeVectors: true });
    expect(a).toEqual({ id: 'a', vector: [1, 0], sparseVector: { indices: [1], values: [1] } });
  });
});

describe('reset of every namespace', () => {
  it('empties the whole index', async () => {
    const running = await start({ indexType: 'DENSE', dimension: 2 });
    try {
      const index = running.index();
      await index.upsert({ id: 'root', vector: [1, 0] });
      await index.namespace('other').upsert({ id: 'leaf', vector: [0, 1] });
      expect(await index.reset({ all: true })).toBe('Success');
      expect((await index.info()).vectorCount).toBe(0);
      expect(await index.listNamespaces()).toEqual(['']);
      expect(await index.namespace('other').query({ vector: [0, 1], topK: 5 })).toEqual([]);
    } finally {
      await running.stop();
    }
  });
});

describe('persistence', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vector-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const shape = { indexType: 'HYBRID', dimension: 3 } as const;
  const probe = { vector: [1, 0.2, 0], sparseVector: { indices: [5], values: [1] }, topK: 10, includeMetadata: true };

  it('keeps vectors, deletes and namespaces across a restart, and saves on its own after writes', async () => {
    const first = await start({ ...shape, dataDir: dir, saveDelayMs: 20 });
    const index = first.index();
    await index.upsert(
      Array.from({ length: 50 }, (_, i) => ({
        id: `p${i}`,
        vector: [1, i / 50, (i % 7) / 7],
        sparseVector: { indices: [i % 5, 5], values: [1, i / 10] },
        metadata: { i },
      })),
    );
    await index
      .namespace('second')
      .upsert({ id: 'n', vector: [0, 0, 1], sparseVector: { indices: [5], values: [2] }, data: 'n' });
    await index.delete(['p3', 'p4']);
    await index.update({ id: 'p5', metadata: { i: 5, edited: true } });
    const before = await index.query(probe);
    const pageBefore = await index.range({ cursor: 0, limit: 100 });

    // No flush: the debounced save alone must reach the disk.
    await expect.poll(async () => existsSync(join(dir, 'manifest.json')), { timeout: 5000 }).toBe(true);
    await expect
      .poll(async () => Object.keys(JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')).namespaces).sort(), {
        timeout: 5000,
      })
      .toEqual(['', 'second']);
    await first.stop();

    const second = await start({ ...shape, dataDir: dir });
    try {
      const reopened = second.index();
      expect(await reopened.query(probe)).toEqual(before);
      expect(await reopened.range({ cursor: 0, limit: 100 })).toEqual(pageBefore);
      expect(await reopened.fetch(['p3', 'p5'], { includeMetadata: true })).toEqual([
        null,
        { id: 'p5', metadata: { i: 5, edited: true } },
      ]);
      expect(await reopened.namespace('second').fetch(['n'], { includeData: true, includeVectors: true })).toEqual([
        { id: 'n', vector: [0, 0, 1], sparseVector: { indices: [5], values: [2] }, data: 'n' },
      ]);
      expect((await reopened.info()).vectorCount).toBe(49);

      // New writes after a restart extend the saved order instead of colliding with it.
      await reopened.upsert({ id: 'late', vector: [1, 1, 1], sparseVector: { indices: [5], values: [1] } });
      const page = await reopened.range({ cursor: 0, limit: 100 });
      expect(ids(page.vectors)).toEqual([...ids(pageBefore.vectors), 'late']);
      await reopened.deleteNamespace('second');
    } finally {
      await second.stop();
    }

    const files = await readdir(dir);
    expect(files.filter((file) => file.endsWith('.ndjson'))).toHaveLength(1);
    expect(files).not.toContain('manifest.json.tmp');
  });

  it('rebuilds the graph when its file is missing', async () => {
    for (const file of await readdir(dir)) if (file.endsWith('.usearch')) await rm(join(dir, file));
    const running = await start({ ...shape, dataDir: dir });
    try {
      const results = await running.index().query({ ...probe, queryMode: QueryMode.DENSE, topK: 3 });
      expect(results).toHaveLength(3);
      // 48 left of the first 50, plus the one written after the restart.
      expect((await running.index().info()).vectorCount).toBe(49);
    } finally {
      await running.stop();
    }
  });

  it('refuses a data directory written for another index shape', async () => {
    await expect(createVectorServer({ token, indexType: 'HYBRID', dimension: 4, dataDir: dir })).rejects.toThrow(
      /holds a HYBRID index \(dimension 3, COSINE\), not the configured HYBRID index \(dimension 4, COSINE\)/,
    );
  });
});

describe('unreadable saved state', () => {
  it('names the directory and the way out', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'vector-bad-'));
    try {
      await writeFile(join(dir, 'manifest.json'), '{ not json');
      await expect(createVectorServer({ token, indexType: 'DENSE', dimension: 2, dataDir: dir })).rejects.toThrow(
        `The vector data in ${dir} cannot be read`,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

const denseQuery = (vector: Float32Array, topK: number): VectorQuery => ({
  vector,
  topK,
  fusionAlgorithm: 'RRF',
  queryMode: 'HYBRID',
  includeMetadata: false,
  includeVectors: false,
  includeData: false,
});

describe('engine', () => {
  it('removes deleted and replaced vectors from the HNSW graph itself', () => {
    const store = new NamespaceStore({ indexType: 'DENSE', dimension: 2, similarityFunction: 'COSINE' }, defaultHnsw);
    store.upsert([
      { id: 'a', vector: Float32Array.of(1, 0) },
      { id: 'b', vector: Float32Array.of(0, 1) },
    ]);
    expect(store.dense?.size).toBe(2);
    store.upsert([{ id: 'a', vector: Float32Array.of(1, 1) }]);
    expect(store.dense?.size).toBe(2);
    expect(store.delete(['a'])).toBe(1);
    expect(store.dense?.size).toBe(1);
    expect(store.dense?.search(Float32Array.of(1, 0), 5).length).toBe(1);
  });

  it('keeps removing for ever: a namespace filled and emptied again and again (usearch 2.25 looped inside remove)', () => {
    const store = new NamespaceStore({ indexType: 'DENSE', dimension: 8, similarityFunction: 'COSINE' }, defaultHnsw);
    const random = seededRandom(7);
    const vector = () => Float32Array.from({ length: 8 }, () => random() - 0.5);
    // A document of 32 chunks ingested and deleted 60 times: removed vectors pass the rebuild threshold several times.
    for (let round = 0; round < 60; round++) {
      const batch = Array.from({ length: 32 }, (_, i) => ({ id: `r${round}-${i}`, vector: vector() }));
      store.upsert(batch);
      // A search between the writes finds only live vectors, and rebuilds the graph when the removed ones pile up.
      const found = store.query(denseQuery(batch[0]!.vector, 40));
      expect(found.map((hit) => hit.record.id).every((id) => id.startsWith(`r${round}-`))).toBe(true);
      expect(found).toHaveLength(32);
      store.delete(batch.map((item) => item.id));
    }
    expect(store.dense?.size).toBe(0);
    store.upsert([{ id: 'last', vector: vector() }]);
    expect(store.query(denseQuery(vector(), 5)).map((hit) => hit.record.id)).toEqual(['last']);
  });
});
