import { join } from 'node:path';
import { type LocalDeployment, startLocalDeployment } from './local/deployment.ts';
import { ROLES, type UserRoles, userRoles } from './local/roles.ts';
import { describeDevSettings, readDevSettings, settingValues } from './local/user-settings.ts';
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
  // Once: a second signal (tsx relays the first, a terminal sends another) must not exit while
  // the first is still stopping the workers, or they outlive us.
  let stopping: Promise<never> | undefined;
  const shutdown = () => {
    stopping ??= (async () => {
      await running?.stop();
      process.exit(0);
    })();
    return stopping;
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);

  if (!withWorker) {
    running = await startDevstack({ dataDir, ...devstack });
    printStack(running);
    return;
  }
  // Any setting of .dev.vars.example, from the shell or .dev.vars (the shell wins), reaches each worker
  // that reads it. Roles given a model go to that provider; the devstack serves the rest.
  const settings = readDevSettings(root);
  const roles = userRoles(settingValues(settings));
  const deployment = await startLocalDeployment({
    dataDir,
    devstack,
    roles,
    settings: settings.byWorker,
    ports,
    stateDir: join(root, '.wrangler', 'state'),
    beforeWorkers: async (stack) => {
      running = stack;
      printStack(stack);
      printRoles(stack, roles);
      console.log(describeDevSettings(settings, roles).join('\n'));
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
  Upstash Redis         ${stack.redisUrl ? `${stack.redisUrl}   token ${stack.redisToken}` : 'unavailable: rate limiting is off (set REDIS_URL or install redis-server)'}
  OpenAI-compatible     ${stack.openaiBaseUrl}   key ${stack.keys.services.modelApiKey}
  Embeddings            ${stack.embeddings ? `${stack.embeddings.model} (${stack.embeddings.dimension} d)` : 'unavailable: sparse retrieval only'}
${withWorker ? `  Web app               ${local(ports.api)}/\n  API                   ${local(ports.api)}\n  API docs              ${local(ports.api)}/docs\n  Ingest worker         ${local(ports.ingest)}\n  Scoring worker        ${local(ports.scoring)}\n` : ''}`);
}

/** Which provider serves each model role: the user's, or the devstack's stand-in. */
function printRoles(stack: Devstack, roles: UserRoles) {
  const standIn: Record<(typeof ROLES)[number], string> = {
    CHAT: stack.textModel,
    EMBEDDING: stack.embeddings?.model ?? 'none (sparse retrieval only)',
    VISION: stack.visionModel,
    JUDGE: 'none (the lexical scorer)',
    RERANK: stack.rerankModel ?? 'none (reranking unavailable)',
  };
  console.log('Model roles (set ROLE_MODEL, ROLE_BASE_URL, ROLE_API_KEY in the shell or .dev.vars to use your own)');
  for (const role of ROLES) {
    const own = roles[role];
    console.log(`  ${role.padEnd(10)} ${own ? `${own.model} at ${own.baseUrl}` : `devstack: ${standIn[role]}`}`);
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
