import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FaultyService } from '../../devstack/faults.ts';
import { type RunningWorker, startWorker } from '../../devstack/local/worker.ts';
import { freePort } from '../../devstack/ports.ts';
import { makeAdmin, signUp, skipRealPostgres, stack, type TestUser } from '../support/client.ts';
import { clearFaults, type FaultOptions, injectFault } from '../support/ingest.ts';

// GET /ready with each dependency taken down in turn (docs/reliability.md's switches): 503 naming it and
// nothing else, 200 when all are up, and never a secret, a host or an upstream's words in the answer.

interface Check {
  status: 'ok' | 'failing' | 'skipped';
  latency_ms: number;
  reason?: string;
  settings?: string[];
  dead_letters?: number;
}
interface Readiness {
  status: 'ready' | 'failing';
  checks: Record<string, Check>;
  failing: string[];
}

const READY_TOKEN = 'ready-token-of-this-test-0123456789abcdef';
const hasRedis = Boolean(stack.apiVars?.UPSTASH_REDIS_REST_URL);
const hasEmbeddings = Boolean(stack.apiVars?.EMBEDDING_MODEL);
let admin: TestUser;
let user: TestUser;
/** API workers of this file's own with READY_TOKEN set: one as the deployment's, one with a setting broken. */
let withToken: RunningWorker;
let misconfigured: RunningWorker;

const apiWorker = async (name: string, vars: Record<string, string>) =>
  startWorker({
    config: 'wrangler.toml',
    port: await freePort(),
    vars: { ...stack.apiVars, READY_TOKEN, ...vars },
    hyperdrive: { HYPERDRIVE: stack.workerDatabaseUrls.api },
    persistTo: join(stack.persistDir, 'wrangler', name),
    quiet: true,
  });

async function ready(token?: string, base = stack.apiUrl) {
  const response = await fetch(`${base}/ready`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await response.text();
  return { status: response.status, text, body: JSON.parse(text) as Readiness & { code?: string } };
}

/** Nothing the deployment keeps secret, no host and no upstream's words. */
function expectNothingLeaked(text: string) {
  const secrets = [
    stack.serviceRoleKey,
    stack.qstashToken,
    stack.qstashSigningKeys.current,
    stack.qstashSigningKeys.next,
    stack.vectorToken,
    stack.modelApiKey,
    stack.databaseUrl,
    stack.workerDatabaseUrls.api,
    READY_TOKEN,
    ...(stack.apiVars.UPSTASH_REDIS_REST_TOKEN ? [stack.apiVars.UPSTASH_REDIS_REST_TOKEN] : []),
  ];
  for (const secret of secrets) expect(text.includes(secret)).toBe(false);
  expect(text).not.toMatch(/injected|127\.0\.0\.1|localhost|postgres:|Error:|ECONN/i);
}

beforeAll(async () => {
  if (skipRealPostgres) return;
  [admin, user, withToken, misconfigured] = await Promise.all([
    signUp('ready-admin').then(makeAdmin),
    signUp('ready-user'),
    apiWorker('api-ready', {}),
    apiWorker('api-ready-misconfigured', { CORS_ORIGINS: 'not-an-origin' }),
  ]);
}, 120_000);
afterAll(() => Promise.all([withToken?.stop(), misconfigured?.stop()]));
afterEach(() => clearFaults());

describe.skipIf(skipRealPostgres)('GET /ready', () => {
  it('answers 200 with every check and its latency when everything is up', async () => {
    const { status, body, text } = await ready(admin.token);
    expect(status, text).toBe(200);
    expect(body.status).toBe('ready');
    expect(body.failing).toEqual([]);
    for (const name of ['config', 'database', 'jwks', 'qstash', 'vector', 'chat']) {
      expect(body.checks[name]?.status, name).toBe('ok');
      expect(body.checks[name]?.latency_ms, name).toBeGreaterThanOrEqual(0);
    }
    expect(body.checks.redis?.status).toBe(hasRedis ? 'ok' : 'skipped');
    expect(body.checks.embeddings?.status).toBe(hasEmbeddings ? 'ok' : 'skipped');
    expect(typeof body.checks.qstash?.dead_letters).toBe('number');
    expectNothingLeaked(text);
  });

  it('is for administrators only when READY_TOKEN is not set', async () => {
    expect((await ready()).status).toBe(401);
    expect((await ready('not-a-token')).status).toBe(401);
    const refused = await ready(user.token);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('forbidden');
  });

  const outages: [string, FaultyService, FaultOptions, string[]][] = [
    ['the database', 'postgres', { match: 'api' }, ['database']],
    ['the JWKS', 'auth', {}, ['jwks']],
    ['QStash', 'qstash', {}, ['qstash']],
    ['the vector index', 'vector', {}, ['vector']],
    ['the models', 'models', {}, hasEmbeddings ? ['chat', 'embeddings'] : ['chat']],
    ...(hasRedis ? [['Redis', 'redis', {}, ['redis']] as [string, FaultyService, FaultOptions, string[]]] : []),
  ];

  it.each(outages)('answers 503 naming %s, and only it, when it is down', async (_name, service, options, failing) => {
    // The admin's token is verified with keys cached before the outage (the JWKS's own check fetches anew).
    expect((await ready(admin.token)).status).toBe(200);
    await injectFault(service, options);
    const { status, body, text } = await ready(admin.token);
    expect(status, text).toBe(503);
    expect(body.status).toBe('failing');
    expect(body.failing.sort()).toEqual([...failing].sort());
    for (const name of failing) expect(body.checks[name]?.reason, name).toMatch(/^(unavailable|unreachable|timeout)$/);
    expectNothingLeaked(text);
    await clearFaults();
    expect((await ready(admin.token)).status).toBe(200);
  });

  it('gives up on a dependency after 2 s, naming it as timed out', async () => {
    await injectFault('vector', { delayMs: 4_000 });
    const started = Date.now();
    const { status, body } = await ready(admin.token);
    expect(status).toBe(503);
    expect(body.failing).toEqual(['vector']);
    expect(body.checks.vector).toMatchObject({ status: 'failing', reason: 'timeout' });
    expect(Date.now() - started).toBeLessThan(3_900);
  });

  it('with READY_TOKEN, takes that token alone, and no user’s', async () => {
    const { status, body, text } = await ready(READY_TOKEN, withToken.url);
    expect(status, text).toBe(200);
    expect(body.failing).toEqual([]);
    expectNothingLeaked(text);
    expect((await ready(undefined, withToken.url)).status).toBe(401);
    expect((await ready(`${READY_TOKEN}x`, withToken.url)).body.code).toBe('invalid_token');
    expect((await ready(admin.token, withToken.url)).status).toBe(401);
  });

  it('with READY_TOKEN, names the settings that do not validate, never their values', async () => {
    expect((await ready(undefined, misconfigured.url)).status).toBe(401);
    expect((await ready(admin.token, misconfigured.url)).status).toBe(401);
    const { status, body, text } = await ready(READY_TOKEN, misconfigured.url);
    expect(status, text).toBe(503);
    expect(body.failing).toEqual(['config']);
    expect(body.checks.config).toMatchObject({ status: 'failing', reason: 'misconfigured', settings: ['CORS_ORIGINS'] });
    expect(body.checks.database).toMatchObject({ status: 'skipped', reason: 'config_failing' });
    expect(text).not.toContain('not-an-origin');
    expectNothingLeaked(text);
  });
});
