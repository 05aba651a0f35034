import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningWorker, startWorker } from '../../devstack/local/worker.ts';
import { freePort } from '../../devstack/ports.ts';
import { callApi } from '../support/api-call.ts';
import { type Method, mintToken, signUp, stack, type TestUser } from '../support/client.ts';
import { clearFaults, injectFault } from '../support/ingest.ts';

// Rate limits on real Redis, behind the devstack's Upstash REST front: API workers of their own with
// small limits, beside the suite's, whose limits are out of reach.
const GENERAL = 10; // a token every 6 s: far more than a loop of requests takes, so counts are exact
const QUESTIONS = 3; // a token every 20 s
const SEARCHES = 3;
const FAILURES = 5; // a try every 12 s, per client address
const hasRedis = Boolean(stack.apiVars.UPSTASH_REDIS_REST_URL);
if (!hasRedis && process.env.REQUIRE_REDIS) {
  throw new Error('REQUIRE_REDIS is set but the devstack has no Redis: set REDIS_URL or install redis-server');
}

let limited: RunningWorker;
let unreachable: RunningWorker;

async function worker(name: string, vars: Record<string, string>) {
  return startWorker({
    config: 'wrangler.toml',
    port: await freePort(),
    vars: {
      ...stack.apiVars,
      RATE_LIMIT_PER_MINUTE: String(GENERAL),
      QUERY_RATE_LIMIT_PER_MINUTE: String(QUESTIONS),
      SEARCH_RATE_LIMIT_PER_MINUTE: String(SEARCHES),
      AUTH_FAILURE_RATE_LIMIT_PER_MINUTE: String(FAILURES),
      ...vars,
    },
    hyperdrive: { HYPERDRIVE: stack.databaseUrl },
    persistTo: join(stack.persistDir, name),
    quiet: true,
    logFile: join(stack.persistDir, `${name}.log`),
  });
}

/** A request to one of this file's workers. */
const call = <M extends Method, P extends string>(
  base: RunningWorker,
  method: M,
  path: P,
  headers: Record<string, string>,
  body?: unknown,
) => callApi(base.url, method, path, { headers, body });

const bearer = (user: TestUser) => ({ Authorization: `Bearer ${user.token}` });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** A key of the right shape that no one holds: what a guesser sends. */
const guessedKey = () => `rag_${randomBytes(32).toString('base64url')}`;

/** `"general";r=3;t=2, "query";r=0;t=20` as { general: {r, t}, query: {r, t} }. */
function parseRateLimit(header: string | null): Record<string, { r: number; t: number }> {
  const policies: Record<string, { r: number; t: number }> = {};
  for (const item of (header ?? '').split(',').filter(Boolean)) {
    const [name, ...params] = item.trim().split(';');
    const values = Object.fromEntries(params.map((p) => p.split('=') as [string, string]));
    policies[JSON.parse(name as string)] = { r: Number(values.r), t: Number(values.t) };
  }
  return policies;
}

beforeAll(async () => {
  if (!hasRedis) return;
  [limited, unreachable] = await Promise.all([
    worker('rate-limited', {}),
    // Redis settings that point nowhere: every request must still go through.
    worker('rate-unreachable', { UPSTASH_REDIS_REST_URL: `http://127.0.0.1:${await freePort()}` }),
  ]);
});
afterAll(async () => {
  await clearFaults();
  await Promise.all([limited?.stop(), unreachable?.stop()]);
});

describe.skipIf(!hasRedis)('rate limits', () => {
  it('counts down on every response, then answers 429 with Retry-After, and admits again once a token is back', async () => {
    const user = await signUp('limited');
    for (let i = 1; i <= GENERAL; i++) {
      const response = await call(limited, 'GET', '/collections/', bearer(user));
      expect(response.status, `request ${i}`).toBe(200);
      expect(response.headers.get('ratelimit-policy')).toBe(`"general";q=${GENERAL};w=60`);
      expect(parseRateLimit(response.headers.get('ratelimit')).general?.r).toBe(GENERAL - i);
    }
    const refused = await call(limited, 'GET', '/collections/', bearer(user));
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'rate_limited', request_id: expect.any(String) });
    expect(refused.body.detail).toMatch(/^Too many requests: at most 10 a minute; try again in \d+ s$/);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60 / GENERAL);
    expect(parseRateLimit(refused.headers.get('ratelimit')).general?.r).toBe(0);

    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000 + 200));
    expect((await call(limited, 'GET', '/collections/', bearer(user))).status).toBe(200);
  });

  it('counts one user’s bearer token and all their API keys against their one limit, apart from other users’', async () => {
    const [user, other] = await Promise.all([signUp('limited-owner'), signUp('limited-other')]);
    const started = Date.now();
    const credentials: Record<string, string>[] = [bearer(user)];
    for (let i = 0; i < 3; i++) {
      const key = await call(limited, 'POST', '/keys/', bearer(user), { name: `key ${i}`, scopes: ['collections:read'] });
      expect(key.status).toBe(200);
      credentials.push({ 'X-API-Key': key.body.key });
    }
    // The three creations took three of the user's requests. Round the four credentials until each is refused.
    let admitted = 3;
    const refused = new Set<number>();
    for (let i = 0; refused.size < credentials.length && i < GENERAL * credentials.length; i++) {
      const response = await call(limited, 'GET', '/collections/', credentials[i % credentials.length] as Record<string, string>);
      if (response.status === 200) admitted += 1;
      else {
        expect(response.status).toBe(429);
        refused.add(i % credentials.length);
      }
    }
    expect(refused.size).toBe(credentials.length);
    // One bucket of GENERAL, plus any token that came back while the loop ran (one per 60/GENERAL s);
    // per credential it was four buckets, 4 × GENERAL.
    const refills = Math.floor((Date.now() - started) / ((60 / GENERAL) * 1000));
    expect(admitted).toBeGreaterThanOrEqual(GENERAL);
    expect(admitted).toBeLessThanOrEqual(GENERAL + refills);

    const byOther = await call(limited, 'GET', '/collections/', bearer(other));
    expect(byOther.status).toBe(200);
    expect(parseRateLimit(byOther.headers.get('ratelimit')).general?.r).toBe(GENERAL - 1);
  });

  it('limits questions more strictly, on top of the general limit, and says both', async () => {
    const user = await signUp('limited-asker');
    const ask = () => call(limited, 'POST', '/query/', bearer(user), { question: 'What is the tide?', collection_id: '' });
    for (let i = 1; i <= QUESTIONS; i++) {
      const answered = await ask();
      expect(answered.status, `question ${i}`).toBe(200);
      expect(answered.headers.get('ratelimit-policy')).toBe(`"general";q=${GENERAL};w=60, "query";q=${QUESTIONS};w=60`);
      expect(parseRateLimit(answered.headers.get('ratelimit')).query?.r).toBe(QUESTIONS - i);
    }
    const refused = await ask();
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toMatch(/^Too many questions: at most 3 a minute/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(60 / GENERAL);
    // Searching is not asking: it takes from the search bucket, not the question one.
    const search = await call(limited, 'POST', '/query/search', bearer(user), { question: 'tide', collection_id: '' });
    expect(search.status).toBe(200);
    expect(search.headers.get('ratelimit-policy')).toBe(`"general";q=${GENERAL};w=60, "search";q=${SEARCHES};w=60`);
  });

  it('counts searches, which embed the question, against a limit of their own, by key and token together', async () => {
    const user = await signUp('limited-searcher');
    const key = await call(limited, 'POST', '/keys/', bearer(user), { name: 'search', scopes: ['query'] });
    expect(key.status).toBe(200);
    const search = (headers: Record<string, string>) =>
      call(limited, 'POST', '/query/search', headers, { question: 'What is the tide?', collection_id: '' });
    for (let i = 1; i <= SEARCHES; i++) {
      const found = await search(i % 2 ? bearer(user) : { 'X-API-Key': key.body.key });
      expect(found.status, `search ${i}`).toBe(200);
      expect(parseRateLimit(found.headers.get('ratelimit')).search?.r).toBe(SEARCHES - i);
    }
    const refused = await search({ 'X-API-Key': key.body.key });
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toMatch(/^Too many searches: at most 3 a minute; try again in \d+ s$/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(60 / GENERAL);
    // The other routes still answer: only the general bucket is theirs.
    expect((await call(limited, 'GET', '/collections/', bearer(user))).status).toBe(200);
  });

  it('puts the headers on refusals too, and none on a 401, which has no caller to count', async () => {
    const user = await signUp('limited-refused');
    const missing = await call(limited, 'GET', '/collections/00000000-0000-4000-8000-000000000000/documents', bearer(user));
    expect(missing.status).toBe(404);
    expect(missing.headers.get('ratelimit')).toMatch(/^"general";r=\d+;t=\d+$/);
    const anonymous = await call(limited, 'GET', '/collections/', {});
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('ratelimit')).toBeNull();
  });

  it('limits refused credentials per client address: past the limit every credential from it is 429, others go on', async () => {
    const user = await signUp('limited-guesser');
    const from = (address: string, headers: Record<string, string>) => ({ ...headers, 'CF-Connecting-IP': address });
    const guesser = '203.0.113.7';
    const neighbour = '203.0.113.8';
    for (let i = 1; i <= FAILURES; i++) {
      const guess = await call(limited, 'GET', '/collections/', from(guesser, { 'X-API-Key': guessedKey() }));
      expect(guess.status, `guess ${i}`).toBe(401);
      expect(guess.body.code).toBe('invalid_api_key');
      expect(parseRateLimit(guess.headers.get('ratelimit')).auth_failures?.r).toBe(FAILURES - i);
    }
    const forged = await mintToken({ sub: user.id }, { key: new TextEncoder().encode('a guessed secret'), alg: 'HS256' });
    const refused = await call(limited, 'GET', '/collections/', from(guesser, { Authorization: `Bearer ${forged}` }));
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'rate_limited' });
    expect(refused.body.detail).toMatch(
      /^Too many failed authentications from this address: at most 5 a minute; try again in \d+ s$/,
    );
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60 / FAILURES);
    // Even a valid token from that address waits: an answer would tell a right guess from a wrong one.
    const valid = await call(limited, 'GET', '/collections/', from(guesser, bearer(user)));
    expect(valid.status).toBe(429);
    expect(valid.headers.get('retry-after')).not.toBeNull();

    // Another address is not held back, and its refusals are still 401.
    expect((await call(limited, 'GET', '/collections/', from(neighbour, bearer(user)))).status).toBe(200);
    expect((await call(limited, 'GET', '/collections/', from(neighbour, { 'X-API-Key': guessedKey() }))).status).toBe(401);

    // A try comes back after Retry-After.
    await sleep(retryAfter * 1000 + 200);
    expect((await call(limited, 'GET', '/collections/', from(guesser, bearer(user)))).status).toBe(200);
  });

  it('counts only credentials that are not genuine: an expired token, or no credential, is never held back', async () => {
    const user = await signUp('limited-expired');
    const expired = await mintToken({ sub: user.id }, { expiresIn: Math.floor(Date.now() / 1000) - 60 });
    const address = { 'CF-Connecting-IP': '198.51.100.20' };
    for (let i = 0; i < FAILURES + 2; i++) {
      const late = await call(limited, 'GET', '/collections/', { ...address, Authorization: `Bearer ${expired}` });
      expect(late.body.code, `expired token ${i + 1}`).toBe('token_expired');
      expect((await call(limited, 'GET', '/collections/', address)).body.code).toBe('unauthenticated');
    }
    expect((await call(limited, 'GET', '/collections/', { ...address, ...bearer(user) })).status).toBe(200);
  });

  it('lets requests through, without the headers, when Redis fails or cannot be reached', async () => {
    const user = await signUp('limited-outage');
    await injectFault('redis', { status: 503 });
    try {
      for (let i = 0; i < GENERAL + 5; i++) {
        const response = await call(limited, 'GET', '/collections/', bearer(user));
        expect(response.status, `request ${i + 1} with Redis failing`).toBe(200);
        expect(response.headers.get('ratelimit')).toBeNull();
      }
    } finally {
      await clearFaults();
    }
    const counted = await call(limited, 'GET', '/collections/', bearer(user));
    expect(counted.status).toBe(200);
    expect(counted.headers.get('ratelimit')).not.toBeNull();

    for (let i = 0; i < GENERAL + 5; i++) {
      const response = await call(unreachable, 'GET', '/collections/', bearer(user));
      expect(response.status, `request ${i + 1} with Redis unreachable`).toBe(200);
      expect(response.headers.get('ratelimit')).toBeNull();
    }
    // Refused credentials are not counted either: the guard fails open like the limits.
    for (let i = 0; i < FAILURES + 2; i++) {
      const guess = await call(unreachable, 'GET', '/collections/', { 'X-API-Key': guessedKey() });
      expect(guess.status, `guess ${i + 1} with Redis unreachable`).toBe(401);
    }
    // Said once, loudly, not once per request: the first failure, then at most a line a minute.
    const log = join(stack.persistDir, 'rate-unreachable.log');
    await expect.poll(async () => (await readFile(log, 'utf8')).match(/RATE LIMITS OFF/g)?.length ?? 0).toBeGreaterThan(0);
    await sleep(500);
    const lines = (await readFile(log, 'utf8')).split('\n').filter((line) => line.includes('RATE LIMITS OFF'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/RATE LIMITS OFF: Redis at 127\.0\.0\.1:\d+ failed \(.+\) \(\w+\); requests go through unlimited/);
  });
});
