import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { Ratelimit } from '@upstash/ratelimit';
import { errors, Redis } from '@upstash/redis';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadKeys } from '../../devstack/keys.ts';
import { freePort } from '../../devstack/ports.ts';
import { type RedisBackend, startRedisBackend } from '../../devstack/redis/backend.ts';
import { ping } from '../../devstack/redis/ping.ts';
import { findRedisServer } from '../../devstack/redis/redis-server.ts';
import { withoutUpstashFlag } from '../../devstack/redis/scripts.ts';
import { createRedisServer, type RedisRest } from '../../devstack/redis/server.ts';

const token = 'redis-test-token';
// Other test runs and devstacks share this Redis: every key here starts with this, and only those are deleted.
const prefix = `test:devstack-redis:${randomUUID()}:`;
const key = (name: string) => `${prefix}${name}`;
const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

/**
 * The Redis the devstack would use (REDIS_URL, else a redis-server of its own), or null:
 * the tests skip, except under REQUIRE_REDIS (CI), where that is a failure.
 */
async function availableRedis(dataDir: string): Promise<RedisBackend | null> {
  let reason: string;
  try {
    const backend = await startRedisBackend({ redisUrl: process.env.REDIS_URL || undefined, dataDir });
    if (backend) return backend;
    reason = 'no REDIS_URL and no redis-server on PATH';
  } catch (error) {
    reason = error instanceof Error ? error.message : String(error);
  }
  if (process.env.REQUIRE_REDIS) throw new Error(`Redis is required (REQUIRE_REDIS) but unavailable: ${reason}`);
  console.warn(`Skipping the Redis tests: ${reason}`);
  return null;
}

const dataDir = await mkdtemp(join(tmpdir(), 'devstack-redis-'));
const backend = await availableRedis(join(dataDir, 'redis'));
const redisServer = await findRedisServer();

interface Front {
  url: string;
  rest: RedisRest;
  client(secret?: string): Redis;
  stop(): Promise<void>;
}

/** The REST front under /redis on a free loopback port, as the devstack mounts it. */
async function startFront(redisUrl: string): Promise<Front> {
  const rest = createRedisServer({ token, redisUrl });
  const root = new Hono().route('/redis', rest.app);
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const listening = serve({ fetch: root.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(listening));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/redis`;
  return {
    url,
    rest,
    client: (secret = token) => new Redis({ url, token: secret, retry: false, enableTelemetry: false }),
    stop: async () => {
      await rest.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

afterAll(async () => {
  await backend?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe.skipIf(!backend)('Upstash Redis REST front on real Redis', () => {
  let front: Front;
  let redis: Redis;
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${front.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    front = await startFront(backend!.url);
    redis = front.client();
  });
  afterAll(async () => {
    if (!front) return;
    // SCAN and DEL this run's keys; never FLUSH a Redis that others use.
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, { match: `${prefix}*`, count: 500 });
      if (keys.length > 0) await redis.del(...keys);
      cursor = String(next);
    } while (cursor !== '0');
    await front.stop();
  });

  it('sets and gets strings, JSON values and strings that look binary', async () => {
    expect(await redis.set(key('plain'), 'hello')).toBe('OK');
    expect(await redis.get(key('plain'))).toBe('hello');

    const document = { title: 'Ünïcode ✓', pages: [1, 2], nested: { ok: true }, none: null };
    await redis.set(key('json'), document);
    expect(await redis.get(key('json'))).toEqual(document);

    // Bytes that are not text, what base64 looks like, and the one string Upstash leaves unencoded.
    for (const [name, value] of [
      ['control', '\u0000\u0001\u00fe\u00ff binary'],
      ['base64', 'T0s='],
      ['ok', 'OK'],
      ['emoji', '🦀 crab'],
    ]) {
      await redis.set(key(name!), value);
      expect(await redis.get(key(name!))).toBe(value);
    }
  });

  it('counts with incr and answers null for a missing key', async () => {
    expect(await redis.incr(key('counter'))).toBe(1);
    expect(await redis.incrby(key('counter'), 41)).toBe(42);
    expect(await redis.get(key('counter'))).toBe(42);
    expect(await redis.get(key('never-set'))).toBeNull();
    expect(await redis.hgetall(key('never-set'))).toBeNull();
  });

  it('keeps hashes and sorted sets in the shapes the client expects', async () => {
    await redis.hset(key('hash'), { name: 'a', count: 2 });
    expect(await redis.hgetall(key('hash'))).toEqual({ name: 'a', count: 2 });
    await redis.zadd(key('zset'), { score: 1.5, member: 'one' }, { score: 3, member: 'two' });
    expect(await redis.zrange(key('zset'), 0, -1, { withScores: true })).toEqual(['one', 1.5, 'two', 3]);
  });

  it('runs a pipeline in order, each command with its own result or error', async () => {
    const pipeline = redis.pipeline();
    pipeline.set(key('piped'), 'text');
    pipeline.incr(key('piped'));
    pipeline.get(key('piped'));
    pipeline.del(key('piped'));
    expect(await pipeline.exec({ keepErrors: true })).toEqual([
      { result: 'OK', error: undefined },
      { result: undefined, error: 'ERR value is not an integer or out of range' },
      { result: 'text', error: undefined },
      { result: 1, error: undefined },
    ]);
    // Without keepErrors, one failed command fails the whole exec, as in production.
    const failing = redis.pipeline();
    failing.set(key('piped'), 'x');
    failing.incr(key('piped'));
    await expect(failing.exec()).rejects.toThrow(/not an integer/);
  });

  it('runs multi-exec as one transaction', async () => {
    const multi = redis.multi();
    multi.set(key('tx'), 1);
    multi.incr(key('tx'));
    multi.get(key('tx'));
    expect(await multi.exec()).toEqual(['OK', 2, 2]);

    // A command failing at run time fails alone; the others are applied.
    const partly = redis.multi();
    partly.set(key('tx-text'), 'text');
    partly.incr(key('tx-text'));
    partly.set(key('tx-after'), 'ran');
    const outcomes = await partly.exec({ keepErrors: true });
    expect(outcomes.map((outcome) => outcome.error)).toEqual([
      undefined,
      'ERR value is not an integer or out of range',
      undefined,
    ]);
    expect(await redis.get(key('tx-after'))).toBe('ran');

    // A command Redis refuses while queueing discards the whole transaction.
    const response = await post('/multi-exec', [['SET', key('tx-discarded'), 'never'], ['GET']]);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: expect.stringMatching(/^EXECABORT/) });
    expect(await redis.get(key('tx-discarded'))).toBeNull();
  });

  it('keeps each transaction whole while others run at the same time', async () => {
    const runs = Array.from({ length: 20 }, () => {
      const multi = redis.multi();
      multi.incr(key('concurrent'));
      multi.incr(key('concurrent'));
      return multi.exec();
    });
    const singles = Array.from({ length: 20 }, () => redis.incr(key('concurrent')));
    const results = (await Promise.all(runs)) as [number, number][];
    await Promise.all(singles);
    for (const [first, second] of results) expect(second).toBe(first + 1);
    expect(await redis.get(key('concurrent'))).toBe(60);
  });

  it("surfaces Redis's errors as the client's UpstashError", async () => {
    await redis.set(key('not-a-number'), 'abc');
    const failure = await redis.incr(key('not-a-number')).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(errors.UpstashError);
    expect((failure as Error).message).toMatch(/ERR value is not an integer or out of range/);

    const response = await post('', ['GET']);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: "ERR wrong number of arguments for 'get' command" });
  });

  it('refuses a wrong or missing token with 401', async () => {
    const failure = await front
      .client('not-the-token')
      .get(key('plain'))
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(errors.UpstashError);
    expect((failure as Error).message).toMatch(/Unauthorized/);

    const wrong = await post('', ['PING'], { authorization: 'Bearer not-the-token' });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toEqual({ error: 'Unauthorized' });
    const missing = await fetch(front.url, { method: 'POST', body: '["PING"]' });
    expect(missing.status).toBe(401);
    // Upstash also takes the token as a query parameter.
    const query = await fetch(`${front.url}/ping?_token=${token}`);
    expect(await query.json()).toEqual({ result: 'PONG' });
  });

  it('encodes results as Upstash does under Upstash-Encoding: base64', async () => {
    const b64 = (text: string) => Buffer.from(text).toString('base64');
    const encoded = { 'upstash-encoding': 'base64' };
    expect(await (await post('', ['SET', key('enc'), 'bar'], encoded)).json()).toEqual({ result: 'OK' });
    expect(await (await post('', ['GET', key('enc')], encoded)).json()).toEqual({ result: b64('bar') });
    expect(await (await post('', ['GET', key('enc-missing')], encoded)).json()).toEqual({ result: null });
    expect(await (await post('', ['INCR', key('enc-n')], encoded)).json()).toEqual({ result: 1 });
    expect(await (await post('', ['PING'], encoded)).json()).toEqual({ result: b64('PONG') });
    // Strings at every depth; integers and nil never; "OK" only bare at the top.
    const script = 'return {1, "x", {2, "OK"}, redis.status_reply("OK")}';
    expect(await (await post('', ['EVAL', script, 0], encoded)).json()).toEqual({
      result: [1, b64('x'), [2, b64('OK')], b64('OK')],
    });
    expect(
      await (
        await post(
          '/pipeline',
          [
            ['SET', key('enc'), 'v'],
            ['GET', key('enc')],
            ['INCR', key('enc')],
          ],
          encoded,
        )
      ).json(),
    ).toEqual([{ result: 'OK' }, { result: b64('v') }, { error: 'ERR value is not an integer or out of range' }]);
    // Without the header: text, with bytes that are not UTF-8 replaced; with it, the bytes themselves.
    expect(await (await post('', ['EVAL', script, 0])).json()).toEqual({ result: [1, 'x', [2, 'OK'], 'OK'] });
    const bytes = ['EVAL', 'return string.char(255, 104, 105)', 0];
    expect(await (await post('', bytes)).json()).toEqual({ result: '\uFFFDhi' });
    expect(await (await post('', bytes, encoded)).json()).toEqual({ result: Buffer.from([255, 104, 105]).toString('base64') });
  });

  it('takes commands in the path form, with a POST body and query parameters as arguments', async () => {
    const get = (path: string) => fetch(`${front.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    const slashed = encodeURIComponent(key('path/with slash'));
    expect(await (await get(`/set/${slashed}/a%20value`)).json()).toEqual({ result: 'OK' });
    expect(await (await get(`/GET/${slashed}`)).json()).toEqual({ result: 'a value' });

    const posted = await fetch(`${front.url}/set/${encodeURIComponent(key('posted'))}?EX=100`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: '{"raw": "json"}',
    });
    expect(await posted.json()).toEqual({ result: 'OK' });
    expect(await redis.get(key('posted'))).toEqual({ raw: 'json' });
    expect(await redis.ttl(key('posted'))).toBeGreaterThan(90);
  });

  it('runs eval and evalsha, answering NOSCRIPT for a script Redis does not have', async () => {
    // A script no run has loaded before, so the first EVALSHA must miss.
    const script = `-- ${randomUUID()}\nreturn {KEYS[1], ARGV[1]}`;
    const failure = await redis.evalsha(sha1(script), [key('k')], ['a']).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(errors.UpstashError);
    expect((failure as Error).message).toMatch(/NOSCRIPT/);
    expect(await redis.eval(script, [key('k')], ['a'])).toEqual([key('k'), 'a']);
    expect(await redis.evalsha(sha1(script), [key('k')], ['b'])).toEqual([key('k'), 'b']);
    expect(await redis.scriptExists(sha1(script))).toEqual([1]);
  });

  it("runs scripts carrying Upstash's allow-key-locking flag, under the ids the client computes", async () => {
    const script = `#!lua flags=allow-key-locking\n-- ${randomUUID()}\nreturn redis.call('INCR', KEYS[1])`;
    expect(withoutUpstashFlag(script).startsWith('\n--')).toBe(true);
    expect(withoutUpstashFlag('#!lua flags=no-writes,allow-key-locking\nreturn 1')).toBe('#!lua flags=no-writes\nreturn 1');
    expect(withoutUpstashFlag('#!lua flags=no-writes\nreturn 1')).toBe('#!lua flags=no-writes\nreturn 1');

    const id = sha1(script);
    await expect(redis.evalsha(id, [key('locked')], [])).rejects.toThrow(/NOSCRIPT/);
    expect(await redis.eval(script, [key('locked')], [])).toBe(1);
    expect(await redis.evalsha(id, [key('locked')], [])).toBe(2);
    expect(await redis.scriptExists(id)).toEqual([1]);

    const loaded = `#!lua flags=allow-key-locking\n-- ${randomUUID()}\nreturn 'loaded'`;
    expect(await redis.scriptLoad(loaded)).toBe(sha1(loaded));
    expect(await redis.evalsha(sha1(loaded), [], [])).toBe('loaded');
  });

  it('lets @upstash/ratelimit admit exactly its token bucket, then refuse', async () => {
    const limiter = new Ratelimit({
      redis,
      limiter: Ratelimit.tokenBucket(1, '1 m', 3),
      prefix: key('ratelimit'),
      ephemeralCache: false,
      analytics: false,
    });
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await limiter.limit('user-1'));
    expect(results.map((result) => result.success)).toEqual([true, true, true, false, false]);
    expect(results.map((result) => result.remaining)).toEqual([2, 1, 0, 0, 0]);
    for (const result of results) {
      expect(result.limit).toBe(3);
      expect(result.reset).toBeGreaterThan(Date.now());
    }
    // Another identifier has a bucket of its own.
    expect((await limiter.limit('user-2')).success).toBe(true);
  });

  it('refuses commands that would change the shared connection or empty a shared Redis', async () => {
    await expect(redis.flushdb()).rejects.toThrow(/Command is not available: 'FLUSHDB'/);
    await expect(redis.flushall()).rejects.toThrow(/FLUSHALL/);
    await expect(redis.scriptFlush()).rejects.toThrow(/SCRIPT FLUSH/);
    const response = await post('', ['MULTI']);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: expect.stringContaining('/multi-exec') });
    expect(await redis.get(key('plain'))).toBe('hello');
  });
});

describe('the Redis behind the front', () => {
  it('is REDIS_URL (or the option) when given, and refuses one that does not answer', async () => {
    const lines: string[] = [];
    const unreachable = `redis://127.0.0.1:${await freePort()}`;
    await expect(startRedisBackend({ redisUrl: unreachable, dataDir, log: (line) => lines.push(line) })).rejects.toThrow(
      /does not answer/,
    );
    if (backend?.source !== 'url') return;
    const given = await startRedisBackend({ redisUrl: backend.url, dataDir });
    expect(given).toMatchObject({ url: backend.url, source: 'url' });
    await given!.stop();
    // Stopping a Redis that was given leaves it running.
    expect(await ping(backend.url)).toBe(true);
  });

  it.skipIf(!redisServer)(
    'is a redis-server of its own without REDIS_URL, its files under the data dir, stopped by stop()',
    async () => {
      const dir = join(dataDir, 'spawned', 'redis');
      const spawned = await startRedisBackend({ dataDir: dir });
      expect(spawned).toMatchObject({ source: 'redis-server', url: expect.stringMatching(/^redis:\/\/127\.0\.0\.1:\d+$/) });
      expect(await ping(spawned!.url)).toBe(true);
      expect(existsSync(join(dir, 'redis-server.log'))).toBe(true);
      await spawned!.stop();
      expect(await ping(spawned!.url, 500)).not.toBe(true);
    },
  );

  it('is none without REDIS_URL or redis-server, saying that rate limiting is off', async () => {
    const lines: string[] = [];
    expect(await startRedisBackend({ dataDir, searchPath: '', log: (line) => lines.push(line) })).toBeNull();
    expect(lines).toEqual([expect.stringMatching(/rate limiting is off.*REDIS_URL.*redis-server/)]);
  });

  it("gives a keys file from before Redis a redisToken, keeping the other services' secrets", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'devstack-keys-'));
    const file = join(dir, 'devstack-keys.json');
    const older = {
      anonKey: 'sb_publishable_old',
      serviceRoleKey: 'sb_secret_old',
      services: {
        qstashToken: 'q',
        qstashCurrentSigningKey: 'c',
        qstashNextSigningKey: 'n',
        vectorToken: 'v',
        modelApiKey: 'm',
        storageSigningSecret: 's',
      },
    };
    await writeFile(file, JSON.stringify(older));
    const keys = await loadKeys(dir, {});
    expect(keys.services).toMatchObject(older.services);
    expect(keys.services.redisToken).toMatch(/^redis_/);
    const stored = JSON.parse(await readFile(file, 'utf8'));
    expect(stored.services.redisToken).toBe(keys.services.redisToken);
    expect((await loadKeys(dir, {})).services.redisToken).toBe(keys.services.redisToken);
    await rm(dir, { recursive: true, force: true });
  });
});
