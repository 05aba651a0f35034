import { exportJWK, generateKeyPair } from 'jose';
import type { TestProject } from 'vitest/node';
import { createTestDatabase } from '../../devstack/harness/real-postgres.ts';
import { fastRetries, startLocalDeployment, UNLIMITED_RATES } from '../../devstack/local/deployment.ts';
import { freePort } from '../../devstack/ports.ts';
import { startPageServer } from './page-server.ts';

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
      /** The database as each worker reaches it, through the proxy the `postgres` fault takes down. */
      workerDatabaseUrls: Record<'api' | 'ingest' | 'scoring', string>;
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
      /** Test pages and fixtures, served on loopback and trusted by the workers for URL ingestion (never as a webhook receiver). */
      pagesUrl: string;
      /**
       * An origin on loopback trusted for webhooks (WEBHOOK_TRUSTED_ORIGINS) where nothing listens until a test starts
       * its own webhook receiver there (test/support/webhook-receiver.ts); one test file at a time uses it.
       */
      receiverUrl: string;
      /** Another origin trusted for webhooks, for the one other file that needs a receiver (web-settings.test.ts). */
      settingsReceiverUrl: string;
      /** And one for sources.test.ts, which receives `source.synced`. */
      sourcesReceiverUrl: string;
      /**
       * Origins on loopback trusted for URL ingestion where nothing listens until a test serves a site there
       * (devstack/harness/site-server.ts): two, so that a crawl can be let onto a second origin or kept off it.
       * One test file at a time uses them (sources.test.ts).
       */
      siteUrls: [string, string];
      /** The same for sources-restart.test.ts, which runs an ingest worker of its own. */
      restartSiteUrl: string;
      /** The ingest worker's settings, for a test that runs a copy of its own. */
      ingestVars: Record<string, string>;
      faultsUrl: string;
      /** The API worker's settings, for tests that start their own copy with one changed. */
      apiVars: Record<string, string>;
      /** Each worker's output, its structured log lines among wrangler's (TEST_WORKER_LOG and the like, else under the deployment's data dir). */
      logFiles: Partial<Record<'api' | 'ingest' | 'scoring', string>>;
    };
  }
}

/**
 * Starts the devstack and the three workers under `wrangler dev`, once per project.
 * The signing key is made here so tests can mint tokens of every kind.
 */
export default async function setup(project: TestProject) {
  const cleanups: (() => Promise<unknown>)[] = [];
  let databaseUrl: string | undefined;
  // The fault suite runs on real PostgreSQL too, in a deployment of its own (test/vitest.config.ts).
  if (project.name === 'postgres' || project.name === 'faults') {
    const created = await createTestDatabase();
    if (!created) {
      project.provide('stack', { engine: 'skipped' } as never);
      return;
    }
    databaseUrl = created.url;
    cleanups.unshift(created.drop);
  }

  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const privateJwk = JSON.stringify({ ...(await exportJWK(privateKey)), kid: 'test-key-1' });
  process.env.DEVSTACK_JWT_PRIVATE_JWK = privateJwk;

  const pages = await startPageServer();
  cleanups.unshift(() => pages.stop());
  const receiverUrl = `http://127.0.0.1:${await freePort()}`;
  const settingsReceiverUrl = `http://127.0.0.1:${await freePort()}`;
  const sourcesReceiverUrl = `http://127.0.0.1:${await freePort()}`;
  const siteUrls: [string, string] = [`http://127.0.0.1:${await freePort()}`, `http://127.0.0.1:${await freePort()}`];
  const restartSiteUrl = `http://127.0.0.1:${await freePort()}`;
  const deployment = await startLocalDeployment({
    devstack: { databaseUrl, qstashBackoffMs: fastRetries },
    vars: {
      INGEST_TRUSTED_ORIGINS: [pages.url, ...siteUrls, restartSiteUrl].join(','),
      WEBHOOK_TRUSTED_ORIGINS: `${receiverUrl},${settingsReceiverUrl},${sourcesReceiverUrl}`,
      ...UNLIMITED_RATES,
      // The fault suite's documents fail every step several times on purpose (a figure's description
      // four attempts of two calls each), and one user owns them all: at the default 4 steps at once,
      // a 17-figure PDF queued behind itself for most of its wait. Flow control stays on; queueing is
      // not what these tests measure (ingest-fairness.test.ts does, at the default).
      ...(project.name === 'faults' ? { INGEST_PARALLELISM_PER_USER: '32' } : {}),
    },
    quiet: true,
    logFiles: { api: process.env.TEST_WORKER_LOG, ingest: process.env.TEST_INGEST_LOG, scoring: process.env.TEST_SCORING_LOG },
  }).catch(async (error) => {
    await cleanup(cleanups);
    throw error;
  });
  cleanups.unshift(() => deployment.stop());
  const { stack } = deployment;

  project.provide('stack', {
    engine: stack.databaseEngine,
    apiUrl: deployment.api.url,
    supabaseUrl: stack.supabaseUrl,
    issuer: stack.issuer,
    jwksUrl: stack.jwksUrl,
    anonKey: stack.keys.anonKey,
    serviceRoleKey: stack.keys.serviceRoleKey,
    databaseUrl: stack.databaseUrl,
    workerDatabaseUrls: stack.workerDatabaseUrls,
    privateJwk,
    persistDir: deployment.dataDir,
    ingestUrl: deployment.ingest.url,
    scoringUrl: deployment.scoring?.url as string,
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
    receiverUrl,
    settingsReceiverUrl,
    sourcesReceiverUrl,
    siteUrls,
    restartSiteUrl,
    ingestVars: deployment.vars.ingest,
    faultsUrl: `${stack.supabaseUrl}/__devstack/faults`,
    apiVars: deployment.apiVars,
    logFiles: deployment.logFiles,
  });
  return () => cleanup(cleanups);
}

async function cleanup(steps: (() => Promise<unknown>)[]) {
  for (const step of steps) await step().catch(() => {});
}
