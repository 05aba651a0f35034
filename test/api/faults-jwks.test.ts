import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { generateKeyPair } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningWorker, startWorker } from '../../devstack/local/worker.ts';
import { freePort } from '../../devstack/ports.ts';
import { db, mintToken, signUp, skipRealPostgres, stack, type TestUser } from '../support/client.ts';
import { expectServiceError, sleep } from '../support/faults.ts';
import { clearFaults, injectFault } from '../support/ingest.ts';

// The identity provider's JWKS endpoint down, for an API worker of this file's own (its own key
// cache, a one-second cooldown, and a JWKS URL no other worker reads). A cold cache, a burst of
// unknown key ids and keys past their maximum staleness are in auth-outage.test.ts.
const client = `faults-${randomUUID().slice(0, 8)}`;
let worker: RunningWorker;
let user: TestUser;

beforeAll(async () => {
  if (skipRealPostgres) return;
  const port = await freePort();
  [worker, user] = await Promise.all([
    startWorker({
      config: 'wrangler.toml',
      port,
      vars: { ...stack.apiVars, AUTH_JWKS_URL: `${stack.jwksUrl}?client=${client}`, AUTH_JWKS_COOLDOWN_SECONDS: '1' },
      hyperdrive: { HYPERDRIVE: stack.databaseUrl },
      persistTo: join(stack.persistDir, 'wrangler', 'api-jwks'),
      quiet: true,
    }),
    signUp('jwks'),
  ]);
});
afterAll(() => worker?.stop());
afterEach(() => clearFaults());

async function call(method: string, path: string, token: string, body?: unknown) {
  const response = await fetch(`${worker.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

/** A well-formed token signed by a key the provider has not published (yet): a rotated key, say. */
async function rotatedKeyToken() {
  const { privateKey } = await generateKeyPair('ES256');
  return mintToken({ sub: user.id }, { key: privateKey, kid: `rotated-${randomUUID()}` });
}

describe.skipIf(skipRealPostgres)('JWKS endpoint down', () => {
  it('authed requests with a cached key still succeed; an unknown key id is 503 and changes nothing', async () => {
    expect((await call('GET', '/collections/', user.token)).status).toBe(200);
    await injectFault('auth', { match: client });
    await sleep(1_100); // past the cooldown, so that an unknown key id makes the worker ask
    expect((await call('GET', '/collections/', user.token)).status).toBe(200);
    const created = await call('POST', '/collections/', user.token, { name: 'made during the outage' });
    expect(created.status).toBe(200);

    const rotated = await rotatedKeyToken();
    const refused = await call('POST', '/collections/', rotated, { name: 'never made' });
    expectServiceError(refused, 503, 'service_unavailable');
    expect(refused.body.detail).toMatch(/identity provider cannot be reached/);
    expectServiceError(await call('GET', '/collections/', rotated), 503, 'service_unavailable');
    const rows = await db()`select name from collections where user_id = ${user.id} order by name`;
    expect(rows.map((r) => r.name)).toEqual(['made during the outage']);

    // Back up: the provider answers that it has no such key, which is the contract's 401.
    await clearFaults();
    await sleep(1_100);
    const unknown = await call('GET', '/collections/', rotated);
    expect(unknown.status).toBe(401);
    expect(unknown.body).toMatchObject({ code: 'invalid_token', detail: 'Invalid token' });
  });
});
