import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';

/** Credentials of the stand-ins for QStash, Upstash Vector and Redis, the model endpoint and Storage's URL signing. */
export interface ServiceSecrets {
  qstashToken: string;
  qstashCurrentSigningKey: string;
  qstashNextSigningKey: string;
  vectorToken: string;
  redisToken: string;
  modelApiKey: string;
  storageSigningSecret: string;
}

export interface DevstackKeys {
  privateJwk: JWK;
  publicJwk: JWK;
  anonKey: string;
  serviceRoleKey: string;
  services: ServiceSecrets;
}

interface StoredKeys {
  privateJwk?: JWK;
  anonKey: string;
  serviceRoleKey: string;
  services?: Partial<ServiceSecrets>;
}

const secret = (prefix: string) => `${prefix}${randomBytes(24).toString('base64url')}`;

function newServiceSecrets(): ServiceSecrets {
  return {
    qstashToken: secret('qstash_'),
    qstashCurrentSigningKey: secret('sig_'),
    qstashNextSigningKey: secret('sig_'),
    vectorToken: secret('vector_'),
    redisToken: secret('redis_'),
    modelApiKey: secret('sk-devstack-'),
    storageSigningSecret: secret(''),
  };
}

/**
 * The signing key comes from DEVSTACK_JWT_PRIVATE_JWK when set, so tests can mint
 * their own tokens; otherwise it is generated once and kept under the data dir, so
 * tokens survive a restart of `npm run dev`.
 */
export async function loadKeys(dataDir: string, env: NodeJS.ProcessEnv = process.env): Promise<DevstackKeys> {
  const file = join(dataDir, 'devstack-keys.json');
  const stored = await readStored(file);
  const fresh: StoredKeys = stored ?? {
    anonKey: `sb_publishable_${randomBytes(18).toString('base64url')}`,
    serviceRoleKey: `sb_secret_${randomBytes(24).toString('base64url')}`,
  };

  let changed = !stored;
  // A keys file from before a stand-in existed gets that one's secret; the others stay as they were.
  const services = { ...newServiceSecrets(), ...fresh.services };
  if (Object.keys(services).some((name) => !fresh.services?.[name as keyof ServiceSecrets])) {
    fresh.services = services;
    changed = true;
  }
  let privateJwk = env.DEVSTACK_JWT_PRIVATE_JWK ? parseJwk(env.DEVSTACK_JWT_PRIVATE_JWK) : fresh.privateJwk;
  if (!privateJwk) {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    privateJwk = await exportJWK(privateKey);
    fresh.privateJwk = privateJwk;
    changed = true;
  }
  privateJwk = { ...privateJwk, alg: 'ES256', kid: privateJwk.kid ?? (await calculateJwkThumbprint(privateJwk)) };

  if (changed) {
    await mkdir(dataDir, { recursive: true });
    await writeFile(file, `${JSON.stringify(fresh, null, 2)}\n`, { mode: 0o600 });
  }

  const { d: _private, ...publicJwk } = privateJwk;
  return {
    privateJwk,
    publicJwk,
    anonKey: env.DEVSTACK_ANON_KEY ?? fresh.anonKey,
    serviceRoleKey: env.DEVSTACK_SERVICE_ROLE_KEY ?? fresh.serviceRoleKey,
    services,
  };
}

function parseJwk(text: string): JWK {
  const jwk = JSON.parse(text) as JWK;
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || !jwk.d) {
    throw new Error('DEVSTACK_JWT_PRIVATE_JWK must be a private EC P-256 JWK (kty EC, crv P-256, with d)');
  }
  return jwk;
}

async function readStored(file: string): Promise<StoredKeys | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as StoredKeys;
  } catch {
    return undefined;
  }
}
