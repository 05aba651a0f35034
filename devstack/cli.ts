import { join } from 'node:path';
import { type LocalDeployment, startLocalDeployment } from './deployment.ts';
import { type Devstack, startDevstack } from './stack.ts';

const root = new URL('..', import.meta.url).pathname;
const withWorker = !process.argv.includes('--no-worker');
const dataDir = process.env.DEVSTACK_DATA_DIR ?? join(root, '.data');
const ports = {
  api: Number(process.env.PORT ?? 8787),
  ingest: Number(process.env.INGEST_PORT ?? 8788),
  scoring: Number(process.env.SCORING_PORT ?? 8789),
};
const devstack = {
  databaseUrl: process.env.DATABASE_URL || undefined,
  apiPort: Number(process.env.DEVSTACK_API_PORT ?? 54321),
  postgresPort: Number(process.env.DEVSTACK_PG_PORT ?? 54322),
  // A user's machine downloads the embedding model once; DEVSTACK_OFFLINE=1 never tries.
  allowModelDownload: process.env.DEVSTACK_OFFLINE !== '1',
  log: (line: string) => console.log(`[devstack] ${line}`),
};

async function main() {
  let running: Devstack | LocalDeployment | undefined;
  const shutdown = async () => {
    await running?.stop();
    process.exit(0);
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);

  if (!withWorker) {
    running = await startDevstack({ dataDir, ...devstack });
    printStack(running);
    return;
  }
  const deployment = await startLocalDeployment({
    dataDir,
    devstack,
    ports,
    stateDir: join(root, '.wrangler', 'state'),
    beforeWorkers: async (stack) => {
      running = stack;
      printStack(stack);
      return {};
    },
  });
  running = deployment;
  console.log(`API ready at ${deployment.api.url} — Ctrl-C stops everything.`);
  for (const worker of [deployment.ingest, deployment.scoring, deployment.api]) {
    worker?.process.once('exit', (code) => {
      console.error(`wrangler dev exited (${code}); stopping the devstack.`);
      void shutdown();
    });
  }
}

function printStack(stack: Devstack) {
  const local = (port: number) => `http://127.0.0.1:${port}`;
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
${withWorker ? `  API                   ${local(ports.api)}\n  API docs              ${local(ports.api)}/docs\n  Ingest worker         ${local(ports.ingest)}\n  Scoring worker        ${local(ports.scoring)}\n` : ''}`);
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
