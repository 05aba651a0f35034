import { createHmac, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningWorker, startWorker } from '../../devstack/local/worker.ts';
import { freePort } from '../../devstack/ports.ts';
import { mintToken, signUp, stack, type TestUser } from '../support/client.ts';

// Which signatures the API accepts: ES256 and RS256 by a key its JWKS publishes, and nothing else.
// The devstack's Auth signs ES256 only, so a JWKS of this file's own publishes an RSA key beside an
// EC one (as a Supabase project does while it moves between signing keys), and an HMAC secret, to
// show that even a key set that offers one never makes HS256 acceptable.

const HMAC_SECRET = 'a secret the key set leaks';
const b64url = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

let user: TestUser;
let worker: RunningWorker;
let server: Server;
const published: JWK[] = [];
let rsa: CryptoKey;
/** A Node key object, which jose signs RS*, PS* alike with (a WebCrypto key is bound to one algorithm). */
let rsaWithoutAlg: KeyObject;
let ec: CryptoKey;

beforeAll(async () => {
  user = await signUp('algorithms');
  const [rsaPair, ecPair] = await Promise.all([
    generateKeyPair('RS256', { extractable: true }),
    generateKeyPair('ES256', { extractable: true }),
  ]);
  const bareRsaPair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  [rsa, rsaWithoutAlg, ec] = [rsaPair.privateKey, bareRsaPair.privateKey, ecPair.privateKey];
  published.push(
    { ...(await exportJWK(rsaPair.publicKey)), kid: 'rsa', alg: 'RS256', use: 'sig' },
    // Supabase's keys name their algorithm; a key set that does not leaves the choice to the token.
    { ...(await exportJWK(bareRsaPair.publicKey)), kid: 'rsa-bare', use: 'sig' },
    { ...(await exportJWK(ecPair.publicKey)), kid: 'ec', alg: 'ES256', use: 'sig' },
    { kty: 'oct', kid: 'hmac', k: Buffer.from(HMAC_SECRET).toString('base64url') },
  );
  server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: published }));
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  worker = await startWorker({
    config: 'wrangler.toml',
    port: await freePort(),
    vars: { ...stack.apiVars, AUTH_JWKS_URL: `http://127.0.0.1:${port}/jwks.json` },
    hyperdrive: { HYPERDRIVE: stack.databaseUrl },
    persistTo: join(stack.persistDir, 'auth-algorithms'),
    quiet: true,
  });
});
afterAll(async () => {
  await worker?.stop();
  await new Promise((resolve) => server?.close(resolve));
});

async function list(token: string) {
  const response = await fetch(`${worker.url}/collections/`, { headers: { Authorization: `Bearer ${token}` } });
  return { status: response.status, body: (await response.json()) as { code?: string; detail?: string } };
}

/** A token signed by hand with `sign(signingInput)`, for algorithms jose will not sign with these keys. */
function handMade(header: Record<string, unknown>, sign: (input: string) => string) {
  const claims = {
    sub: user.id,
    aud: 'authenticated',
    role: 'authenticated',
    iss: stack.issuer,
    iat: Math.floor(Date.now() / 1000),
    exp: Math.floor(Date.now() / 1000) + 3600,
  };
  const input = `${b64url({ typ: 'JWT', ...header })}.${b64url(claims)}`;
  return `${input}.${sign(input)}`;
}

const invalid = { status: 401, body: { code: 'invalid_token', detail: 'Invalid token' } };

describe('token algorithms', () => {
  it('accepts RS256 and ES256 tokens signed by keys the JWKS publishes', async () => {
    expect(await list(await mintToken({ sub: user.id }, { key: rsa, kid: 'rsa', alg: 'RS256' }))).toMatchObject({ status: 200 });
    expect(
      await list(await mintToken({ sub: user.id }, { key: rsaWithoutAlg as never, kid: 'rsa-bare', alg: 'RS256' })),
    ).toMatchObject({
      status: 200,
    });
    expect(await list(await mintToken({ sub: user.id }, { key: ec, kid: 'ec', alg: 'ES256' }))).toMatchObject({ status: 200 });
    // The RS256 token still has to be for this deployment: its issuer and audience are checked as for ES256.
    const foreign = await mintToken(
      { sub: user.id, iss: 'https://evil.example/auth/v1' },
      { key: rsa, kid: 'rsa', alg: 'RS256' },
    );
    expect(await list(foreign)).toMatchObject(invalid);
    const wrongAudience = await mintToken({ sub: user.id, aud: 'anon' }, { key: rsa, kid: 'rsa', alg: 'RS256' });
    expect(await list(wrongAudience)).toMatchObject(invalid);
  });

  it('refuses HS256, even with a secret the key set publishes, and a public key used as an HMAC secret', async () => {
    const hmac = (secret: string | Buffer) => (input: string) => createHmac('sha256', secret).update(input).digest('base64url');
    expect(await list(handMade({ alg: 'HS256', kid: 'hmac' }, hmac(HMAC_SECRET)))).toMatchObject(invalid);
    expect(await list(handMade({ alg: 'HS256' }, hmac(HMAC_SECRET)))).toMatchObject(invalid);
    // The old confusion: the RSA public key, as the JWKS shows it, taken for an HMAC secret.
    const rsaPublic = JSON.stringify(published[0]);
    expect(await list(handMade({ alg: 'HS256', kid: 'rsa' }, hmac(rsaPublic)))).toMatchObject(invalid);
  });

  it('refuses `none`, and every algorithm not on the list even when a published key could verify it', async () => {
    expect(await list(handMade({ alg: 'none' }, () => ''))).toMatchObject(invalid);
    expect(await list(handMade({ alg: 'none', kid: 'rsa' }, () => ''))).toMatchObject(invalid);
    // PS256 and RS512 with the RSA key that names no algorithm: the key would verify them, the list does not.
    for (const alg of ['PS256', 'RS512']) {
      const token = await mintToken({ sub: user.id }, { key: rsaWithoutAlg as never, kid: 'rsa-bare', alg });
      expect(await list(token), alg).toMatchObject(invalid);
    }
    // ES384 by a P-384 key, and an RS256 token whose header names the EC key.
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
    expect(
      await list(await mintToken({ sub: user.id }, { key: p384.privateKey as never, kid: 'ec', alg: 'ES384' })),
    ).toMatchObject(invalid);
    expect(await list(await mintToken({ sub: user.id }, { key: rsa, kid: 'ec', alg: 'RS256' }))).toMatchObject(invalid);
  });
});
