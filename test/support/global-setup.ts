import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
import type { TestProject } from 'vitest/node';
import { freePort } from '../../devstack/ports.ts';
import { apiWorkerVars, startDevstack } from '../../devstack/stack.ts';
import { startWorker } from '../../devstack/worker.ts';
import { createTestDatabase } from './real-postgres.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    stack: {
      engine: 'pglite' | 'postgres' | 'skipped';
      apiUrl: string;
      supabaseUrl: string;
      issuer: string;
      jwksUrl: string;
      anonKey: string;
      serviceRoleKey: string;
      databaseUrl: string;
      privateJwk: string;
      persistDir: string;
    };
  }
}

/**
 * Starts the devstack and the API worker under `wrangler dev`, once per project.
 * The signing key is made here so tests can mint tokens of every kind.
 */
export default async function setup(project: TestProject) {
  const realPostgres = project.name === 'postgres';
  const dataDir = await mkdtemp(join(tmpdir(), `rag-test-${project.name}-`));
  const cleanups: (() => Promise<unknown>)[] = [() => rm(dataDir, { recursive: true, force: true })];

  let databaseUrl: string | undefined;
  if (realPostgres) {
    const created = await createTestDatabase();
    if (!created) {
      project.provide('stack', { engine: 'skipped' } as never);
      return () => cleanup(cleanups);
    }
    databaseUrl = created.url;
    cleanups.unshift(created.drop);
  }

  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const privateJwk = JSON.stringify({ ...(await exportJWK(privateKey)), kid: 'test-key-1' });
  process.env.DEVSTACK_JWT_PRIVATE_JWK = privateJwk;

  const stack = await startDevstack({
    dataDir,
    databaseUrl,
    ephemeral: true,
    apiPort: await freePort(),
    postgresPort: await freePort(),
  });
  cleanups.unshift(() => stack.stop());
  const worker = await startWorker({
    config: 'wrangler.toml',
    port: await freePort(),
    vars: apiWorkerVars(stack),
    hyperdrive: { HYPERDRIVE: stack.databaseUrl },
    persistTo: join(dataDir, 'wrangler'),
    quiet: true,
    logFile: process.env.TEST_WORKER_LOG,
  }).catch(async (error) => {
    await cleanup(cleanups);
    throw error;
  });
  cleanups.unshift(() => worker.stop());

  project.provide('stack', {
    engine: stack.databaseEngine,
    apiUrl: worker.url,
    supabaseUrl: stack.supabaseUrl,
    issuer: stack.issuer,
    jwksUrl: stack.jwksUrl,
    anonKey: stack.keys.anonKey,
    serviceRoleKey: stack.keys.serviceRoleKey,
    databaseUrl: stack.databaseUrl,
    privateJwk,
    persistDir: dataDir,
  });
  return () => cleanup(cleanups);
}

async function cleanup(steps: (() => Promise<unknown>)[]) {
  for (const step of steps) await step().catch(() => {});
}
