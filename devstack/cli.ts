import { join } from 'node:path';
import { apiWorkerVars, startDevstack } from './stack.ts';
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
    log: (line) => console.log(`[devstack] ${line}`),
  });
  let worker: RunningWorker | undefined;
  const shutdown = async () => {
    await worker?.stop();
    await stack.stop();
    process.exit(0);
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);

  const apiPort = Number(process.env.PORT ?? 8787);
  console.log(`
Devstack is up (data in ${dataDir})
  Postgres (${stack.databaseEngine})   ${stack.databaseUrl}
  Supabase URL          ${stack.supabaseUrl}
  Auth (GoTrue)         ${stack.authUrl}
  JWKS                  ${stack.jwksUrl}
  anon key              ${stack.keys.anonKey}
  service_role key      ${stack.keys.serviceRoleKey}
${withWorker ? `  API                   http://127.0.0.1:${apiPort}\n  API docs              http://127.0.0.1:${apiPort}/docs\n` : ''}`);

  if (withWorker) {
    worker = await startWorker({
      config: 'wrangler.toml',
      port: apiPort,
      vars: apiWorkerVars(stack),
      hyperdrive: { HYPERDRIVE: stack.databaseUrl },
    });
    console.log(`API ready at ${worker.url} — Ctrl-C stops everything.`);
    worker.process.once('exit', (code) => {
      console.error(`wrangler dev exited (${code}); stopping the devstack.`);
      void stack.stop().then(() => process.exit(code ?? 1));
    });
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
