import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
import type { TestProject } from 'vitest/node';
import { freePort } from '../../devstack/ports.ts';
import { apiWorkerVars, ingestWorkerVars, scoringWorkerVars, startDevstack } from '../../devstack/stack.ts';
import { startWorker } from '../../devstack/worker.ts';
import { startPageServer } from './page-server.ts';
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
      ingestUrl: string;
      scoringUrl: string;
      storageBucket: string;
      vectorUrl: string;
      vectorToken: string;
      qstashUrl: string;
      qstashToken: string;
      qstashSigningKeys: { current: string; next: string };
      openaiBaseUrl: string;
      modelApiKey: string;
      /** Test pages and fixtures, served on loopback and trusted by the workers. */
      pagesUrl: string;
      faultsUrl: string;
      /** The API worker's settings, for tests that start their own copy with one changed. */
      apiVars: Record<string, string>;
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
    // Retries in a second or two, not QStash's minutes.
    qstashBackoffMs: (retry) => 150 * 2 ** retry,
  });
  cleanups.unshift(() => stack.stop());
  const pages = await startPageServer();
  cleanups.unshift(() => pages.stop());

  const ingestUrl = `http://127.0.0.1:${await freePort()}`;
  const hyperdrive = { HYPERDRIVE: stack.databaseUrl };
  const trusted = { INGEST_TRUSTED_ORIGINS: pages.url };
  const start = (config: string, url: string, vars: Record<string, string>, log?: string) =>
    startWorker({
      config,
      port: Number(new URL(url).port),
      vars: { ...vars, ...trusted },
      hyperdrive,
      // One state dir each: two workerd processes starting on one SQLite file collide (SQLITE_BUSY).
      persistTo: join(dataDir, 'wrangler', config.replaceAll('/', '_')),
      quiet: true,
      logFile: log,
    });
  const scoringUrl = `http://127.0.0.1:${await freePort()}`;
  const apiVars = apiWorkerVars(stack, ingestUrl, scoringUrl);
  const workers = await Promise.all([
    start('workers/ingest/wrangler.toml', ingestUrl, ingestWorkerVars(stack, ingestUrl), process.env.TEST_INGEST_LOG),
    start('workers/scoring/wrangler.toml', scoringUrl, scoringWorkerVars(stack, ingestUrl, scoringUrl)),
    freePort().then((port) => start('wrangler.toml', `http://127.0.0.1:${port}`, apiVars, process.env.TEST_WORKER_LOG)),
  ]).catch(async (error) => {
    await cleanup(cleanups);
    throw error;
  });
  for (const worker of workers) cleanups.unshift(() => worker.stop());
  const api = workers[2] as (typeof workers)[number];

  project.provide('stack', {
    engine: stack.databaseEngine,
    apiUrl: api.url,
    supabaseUrl: stack.supabaseUrl,
    issuer: stack.issuer,
    jwksUrl: stack.jwksUrl,
    anonKey: stack.keys.anonKey,
    serviceRoleKey: stack.keys.serviceRoleKey,
    databaseUrl: stack.databaseUrl,
    privateJwk,
    persistDir: dataDir,
    ingestUrl,
    scoringUrl,
    storageBucket: stack.storageBucket,
    vectorUrl: stack.vectorUrl,
    vectorToken: stack.keys.services.vectorToken,
    qstashUrl: stack.qstashUrl,
    qstashToken: stack.keys.services.qstashToken,
    qstashSigningKeys: {
      current: stack.keys.services.qstashCurrentSigningKey,
      next: stack.keys.services.qstashNextSigningKey,
    },
    openaiBaseUrl: stack.openaiBaseUrl,
    modelApiKey: stack.keys.services.modelApiKey,
    pagesUrl: pages.url,
    faultsUrl: `${stack.supabaseUrl}/__devstack/faults`,
    apiVars: { ...apiVars, ...trusted },
  });
  return () => cleanup(cleanups);
}

async function cleanup(steps: (() => Promise<unknown>)[]) {
  for (const step of steps) await step().catch(() => {});
}
