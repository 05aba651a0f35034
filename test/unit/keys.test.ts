import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { loadKeys } from '../../devstack/keys.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'keys-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

it('generates the signing key and API keys once and keeps them across restarts', async () => {
  const first = await loadKeys(dir, {});
  const second = await loadKeys(dir, {});
  expect(second).toEqual(first);
  expect(first.privateJwk).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', kid: expect.any(String) });
  expect(first.publicJwk).not.toHaveProperty('d');
  expect(first.anonKey).toMatch(/^sb_publishable_/);
  expect(first.serviceRoleKey).toMatch(/^sb_secret_/);
});

it('uses DEVSTACK_JWT_PRIVATE_JWK when set, and keeps a generated key once it is unset', async () => {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'mine' };
  const fromEnv = await loadKeys(dir, { DEVSTACK_JWT_PRIVATE_JWK: JSON.stringify(jwk) });
  expect(fromEnv.privateJwk.kid).toBe('mine');
  const generated = await loadKeys(dir, {});
  expect(generated.privateJwk.kid).not.toBe('mine');
  expect((await loadKeys(dir, {})).privateJwk).toEqual(generated.privateJwk);
  expect(generated.anonKey).toBe(fromEnv.anonKey);
});

it('refuses a key that is not a private P-256 JWK', async () => {
  await expect(loadKeys(dir, { DEVSTACK_JWT_PRIVATE_JWK: JSON.stringify({ kty: 'RSA' }) })).rejects.toThrow(/P-256/);
});
