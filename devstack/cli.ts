import { join } from 'node:path';
import { apiWorkerVars, ingestWorkerVars, scoringWorkerVars, startDevstack } from './stack.ts';
import { type RunningWorker, startWorker } from './worker.ts';

const root = new URL('..', import.meta.url).pathname;
const withWorker = !process.argv.includes('--no-worker');
const dataDir = process.env.DEVSTACK_DATA_DIR ?? join(root, '.data');

async function main() {
  const stack = await startDevstack({
    dataDir,
    databaseUrl: process.env.DATABASE_URL || undefined,
    apiPort: Number(process.env.DEVSTACK_API_PORT ?? 54321),
    postgresPort: Number(process.env.DEVSTACK_PG_PORT ?? 54322),
    // A user's machine downloads the embedding model once; DEVSTACK_OFFLINE=1 never tries.
    allowModelDownload: process.env.DEVSTACK_OFFLINE !== '1',
    log: (line) => console.log(`[devstack] ${line}`),
  });
  const workers: RunningWorker[] = [];
  const shutdown = async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    await stack.stop();
    process.exit(0);
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);

  const apiPort = Number(process.env.PORT ?? 8787);
  const ingestPort = Number(process.env.INGEST_PORT ?? 8788);
  const ingestUrl = `http://127.0.0.1:${ingestPort}`;
  const scoringPort = Number(process.env.SCORING_PORT ?? 8789);
  const scoringUrl = `http://127.0.0.1:${scoringPort}`;
  console.log(`
Devstack is up (data in ${dataDir})
  Postgres (${stack.databaseEngine})   ${stack.databaseUrl}
  Supabase URL          ${stack.supabaseUrl}
  Auth (GoTrue)         ${stack.authUrl}
  JWKS                  ${stack.jwksUrl}
  anon key              ${stack.keys.anonKey}
  service_role key      ${stack.keys.serviceRoleKey}
  Storage               ${stack.supabaseUrl}/storage/v1 (bucket ${stack.storageBucket})
  QStash                ${stack.qstashUrl}   token ${stack.keys.services.qstashToken}
  Upstash Vector        ${stack.vectorUrl}   token ${stack.keys.services.vectorToken}
  OpenAI-compatible     ${stack.openaiBaseUrl}   key ${stack.keys.services.modelApiKey}
  Embeddings            ${stack.embeddings ? `${stack.embeddings.model} (${stack.embeddings.dimension} d)` : 'unavailable: sparse retrieval only'}
${withWorker ? `  API                   http://127.0.0.1:${apiPort}\n  API docs              http://127.0.0.1:${apiPort}/docs\n  Ingest worker         ${ingestUrl}\n  Scoring worker        ${scoringUrl}\n` : ''}`);

  if (withWorker) {
    const hyperdrive = { HYPERDRIVE: stack.databaseUrl };
    // A state dir each: two workerd processes on one SQLite file collide (SQLITE_BUSY).
    const state = (name: string) => join(root, '.wrangler', 'state', name);
    const ingestVars = ingestWorkerVars(stack, ingestUrl);
    const apiVars = apiWorkerVars(stack, ingestUrl, scoringUrl);
    const scoringVars = scoringWorkerVars(stack, ingestUrl, scoringUrl);
    workers.push(
      await startWorker({
        config: 'workers/ingest/wrangler.toml',
        port: ingestPort,
        vars: ingestVars,
        hyperdrive,
        persistTo: state('ingest'),
      }),
    );
    workers.push(
      await startWorker({
        config: 'workers/scoring/wrangler.toml',
        port: scoringPort,
        vars: scoringVars,
        hyperdrive,
        persistTo: state('scoring'),
      }),
    );
    const api = await startWorker({ config: 'wrangler.toml', port: apiPort, vars: apiVars, hyperdrive, persistTo: state('api') });
    workers.push(api);
    console.log(`API ready at ${api.url} — Ctrl-C stops everything.`);
    for (const worker of workers) {
      worker.process.once('exit', (code) => {
        console.error(`wrangler dev exited (${code}); stopping the devstack.`);
        void shutdown();
      });
    }
  }
}

main().catch((error: unknown) => {
  const code = (error as NodeJS.ErrnoException).code;
  console.error(
    code === 'EADDRINUSE'
      ? `${(error as Error).message}: is another \`npm run dev\` running? Stop it, or set DEVSTACK_API_PORT, DEVSTACK_PG_PORT and PORT.`
      : error instanceof Error
        ? error.message
        : error,
  );
  process.exit(1);
});
