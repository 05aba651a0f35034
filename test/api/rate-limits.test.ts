import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../devstack/ports.ts';
import { type RunningWorker, startWorker } from '../../devstack/worker.ts';
import { type ApiResponse, signUp, stack, type TestUser } from '../support/client.ts';
import { clearFaults, injectFault } from '../support/ingest.ts';

// Rate limits on real Redis, behind the devstack's Upstash REST front: API workers of their own with
// small limits, beside the suite's, whose limits are out of reach.
const GENERAL = 10; // a token every 6 s: far more than a loop of requests takes, so counts are exact
const QUESTIONS = 3; // a token every 20 s
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
    vars: { ...stack.apiVars, RATE_LIMIT_PER_MINUTE: String(GENERAL), QUERY_RATE_LIMIT_PER_MINUTE: String(QUESTIONS), ...vars },
    hyperdrive: { HYPERDRIVE: stack.databaseUrl },
    persistTo: join(stack.persistDir, name),
    quiet: true,
  });
}

/** A request to one of this file's workers. */
async function call(base: RunningWorker, method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const response = await fetch(`${base.url}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // an event stream
  }
  return { status: response.status, body: parsed, headers: response.headers } as ApiResponse;
}

const bearer = (user: TestUser) => ({ Authorization: `Bearer ${user.token}` });

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

  it('keeps a bucket per API key, apart from its owner’s and from other users’', async () => {
    const [user, other] = await Promise.all([signUp('limited-owner'), signUp('limited-other')]);
    const key = await call(limited, 'POST', '/keys/', bearer(user), { name: 'own bucket', scopes: ['collections:read'] });
    expect(key.status).toBe(200);
    // The key's creation took one of the user's tokens.
    for (let i = 0; i < GENERAL - 1; i++) expect((await call(limited, 'GET', '/collections/', bearer(user))).status).toBe(200);
    expect((await call(limited, 'GET', '/collections/', bearer(user))).status).toBe(429);

    const byKey = await call(limited, 'GET', '/collections/', { 'X-API-Key': key.body.key });
    expect(byKey.status).toBe(200);
    expect(parseRateLimit(byKey.headers.get('ratelimit')).general?.r).toBe(GENERAL - 1);
    expect((await call(limited, 'GET', '/collections/', bearer(other))).status).toBe(200);
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
    // Searching is not asking: it takes only from the general bucket.
    const search = await call(limited, 'POST', '/query/search', bearer(user), { question: 'tide', collection_id: '' });
    expect(search.status).toBe(200);
    expect(search.headers.get('ratelimit-policy')).toBe(`"general";q=${GENERAL};w=60`);
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
  });
});
