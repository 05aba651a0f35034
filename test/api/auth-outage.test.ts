import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningWorker, startWorker } from '../../devstack/local/worker.ts';
import { freePort } from '../../devstack/ports.ts';
import { mintToken, signUp, stack, type TestUser } from '../support/client.ts';
import { injectFault } from '../support/ingest.ts';

// Each API worker here has its own isolate, hence its own key cache, and reads the devstack's JWKS
// under a URL of its own (?client=…), so that a fault on it, and its count, touch no other test.
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function startApiWorker(name: string, vars: Record<string, string>): Promise<RunningWorker> {
  return startWorker({
    config: 'wrangler.toml',
    port: await freePort(),
    vars: { ...stack.apiVars, ...vars },
    hyperdrive: { HYPERDRIVE: stack.databaseUrl },
    persistTo: join(stack.persistDir, name),
    quiet: true,
  });
}

/** The devstack's JWKS endpoint, with its own fault and fetch count. */
function devstackJwks(name: string) {
  const client = `${name}-${randomUUID().slice(0, 8)}`;
  return {
    url: `${stack.jwksUrl}?client=${client}`,
    down: () => injectFault('auth', { match: client }),
    up: () => fetch(`${stack.faultsUrl}?service=auth&match=${client}`, { method: 'DELETE' }),
    /** JWKS fetches that reached the devstack while it was down. */
    fetches: async () => {
      const { faults } = (await (await fetch(stack.faultsUrl)).json()) as { faults: { match?: string; seen: number }[] };
      return faults.find((f) => f.match === client)?.seen ?? 0;
    },
  };
}

async function list(worker: RunningWorker, token: string) {
  const response = await fetch(`${worker.url}/collections/`, { headers: { Authorization: `Bearer ${token}` } });
  return { status: response.status, body: (await response.json()) as { detail?: string; code?: string } };
}

/** A token signed by a key the provider never published. */
async function unknownKidToken(user: TestUser, kid = `unknown-${randomUUID()}`) {
  const { privateKey } = await generateKeyPair('ES256');
  return mintToken({ sub: user.id }, { key: privateKey, kid });
}

const unreachable = { status: 503, body: { code: 'service_unavailable', detail: expect.stringMatching(/identity provider/) } };

let user: TestUser;
beforeAll(async () => {
  user = await signUp('outage');
});

describe('a burst of unknown key ids while the JWKS endpoint is down', () => {
  const jwks = devstackJwks('burst');
  let worker: RunningWorker;
  beforeAll(async () => {
    worker = await startApiWorker('auth-burst', { AUTH_JWKS_URL: jwks.url, AUTH_JWKS_COOLDOWN_SECONDS: '3' });
  });
  afterAll(async () => {
    await jwks.up();
    await worker?.stop();
  });

  const burst = async () => {
    const tokens = await Promise.all(Array.from({ length: 50 }, () => unknownKidToken(user)));
    return Promise.all(tokens.map((token) => list(worker, token)));
  };

  it('on a cold cache: 503 to each, and one fetch between them', async () => {
    await jwks.down();
    for (const response of await burst()) expect(response).toMatchObject(unreachable);
    expect(await jwks.fetches()).toBeGreaterThanOrEqual(1);
    expect(await jwks.fetches()).toBeLessThanOrEqual(2);
  });

  it('with keys cached: 503 to each, one fetch, and known keys still verify', async () => {
    await jwks.up();
    await sleep(3_100); // the failure is remembered for the cooldown
    expect((await list(worker, user.token)).status).toBe(200);
    await jwks.down();
    await sleep(3_100); // so the burst may fetch once
    for (const response of await burst()) expect(response).toMatchObject(unreachable);
    expect(await jwks.fetches()).toBeGreaterThanOrEqual(1);
    expect(await jwks.fetches()).toBeLessThanOrEqual(2);
    expect((await list(worker, user.token)).status).toBe(200);
  }, 60_000);
});

describe('cached keys while refreshes fail', () => {
  const jwks = devstackJwks('stale');
  let worker: RunningWorker;
  beforeAll(async () => {
    worker = await startApiWorker('auth-stale', {
      AUTH_JWKS_URL: jwks.url,
      AUTH_JWKS_REFRESH_SECONDS: '1',
      AUTH_JWKS_MAX_STALE_SECONDS: '8',
      AUTH_JWKS_COOLDOWN_SECONDS: '1',
    });
  });
  afterAll(async () => {
    await jwks.up();
    await worker?.stop();
  });

  it('verify past the refresh interval up to the max staleness, then 503 until the provider is back', async () => {
    expect((await list(worker, user.token)).status).toBe(200);
    const fetched = Date.now(); // the keys were fetched before this
    await jwks.down();

    await sleep(1_500);
    expect(await list(worker, user.token)).toMatchObject({ status: 200 });
    await sleep(500); // the refresh it started in the background has failed by now
    expect(await jwks.fetches()).toBeGreaterThanOrEqual(1);
    expect(await list(worker, await unknownKidToken(user))).toMatchObject(unreachable);

    await sleep(fetched + 8_500 - Date.now());
    expect(await list(worker, user.token)).toMatchObject(unreachable);

    await jwks.up();
    await sleep(1_100);
    expect((await list(worker, user.token)).status).toBe(200);
  }, 60_000);
});

/** A key pair for tokens, and the public half as a JWKS publishes it. */
async function signingKey(kid: string) {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' };
  return { jwk, token: () => mintToken({ sub: user.id }, { key: privateKey, kid }) };
}

/** A JWKS endpoint of the test's own, since the devstack publishes one key and rotation needs two. */
function ownJwks() {
  const published: JWK[] = [];
  let up = true;
  let fetches = 0;
  const server: Server = createServer((_request, response) => {
    fetches += 1;
    if (!up) return void response.writeHead(503).end();
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: published }));
  });
  return {
    server,
    publish: (jwk: JWK) => published.push(jwk),
    setUp: (value: boolean) => {
      up = value;
    },
    fetches: () => fetches,
  };
}

describe('key rotation across an outage', () => {
  const jwks = ownJwks();
  let worker: RunningWorker;
  beforeAll(async () => {
    const port = await freePort();
    await new Promise<void>((resolve) => jwks.server.listen(port, '127.0.0.1', resolve));
    worker = await startApiWorker('auth-rotation', {
      AUTH_JWKS_URL: `http://127.0.0.1:${port}/jwks.json`,
      AUTH_JWKS_COOLDOWN_SECONDS: '1',
    });
  });
  afterAll(async () => {
    await worker?.stop();
    await new Promise((resolve) => jwks.server.close(resolve));
  });

  it('an unknown kid is 401 while the provider answers, 503 while it is down, and a new key is picked up', async () => {
    const [oldKey, newKey] = await Promise.all([signingKey('key-old'), signingKey('key-new')]);
    const [oldToken, newToken] = await Promise.all([oldKey.token(), newKey.token()]);
    jwks.publish(oldKey.jwk);
    expect((await list(worker, oldToken)).status).toBe(200);
    await sleep(1_100);
    expect(await list(worker, newToken)).toMatchObject({ status: 401, body: { detail: 'Invalid token' } });

    jwks.setUp(false);
    await sleep(1_100);
    expect(await list(worker, newToken)).toMatchObject(unreachable);
    expect((await list(worker, oldToken)).status).toBe(200);

    jwks.setUp(true);
    jwks.publish(newKey.jwk);
    await sleep(1_100);
    const before = jwks.fetches();
    expect((await list(worker, newToken)).status).toBe(200);
    expect((await list(worker, oldToken)).status).toBe(200);
    expect(jwks.fetches() - before).toBe(1);
  }, 60_000);
});
