import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { createModels } from '#core/adapters/models.ts';
import { createVectorStore } from '#core/adapters/vectors.ts';
import { userRoles } from '../devstack/local/roles.ts';
import { readDevSettings, settingValues } from '../devstack/local/user-settings.ts';
import { startDevstack } from '../devstack/stack.ts';
import { type ReembedDeps, reembedAll } from './reembed.ts';
import { parseEnvFile } from './settings.ts';

// `npm run reindex`: every document's vectors written again from its stored chunks (deploy/reembed.ts),
// after the embedding model or the index type changed. README.md → "Changing the embedding model".
//
// - Locally: the devstack's index under .data/vector, made for another model, is moved aside and a
//   new one filled, with the model `npm run dev` would use (yours from .dev.vars, or the devstack's).
//   Stop `npm run dev` first; start it again when this ends.
// - In production (`--settings .env.production`, with DATABASE_URL the Supabase connection string in
//   the shell): into the index UPSTASH_VECTOR_REST_URL names, which you create for the new model.
const root = new URL('..', import.meta.url).pathname;
const { values: flags } = parseArgs({ options: { settings: { type: 'string' } } });
const log = (line: string) => console.log(`reindex: ${line}`);

async function run(deps: Omit<ReembedDeps, 'log'>, where: string) {
  log(`${deps.embed ? 'dense and sparse' : 'sparse'} vectors into ${where}`);
  const started = Date.now();
  const done = await reembedAll({ ...deps, log });
  log(`done: ${done.chunks} chunks of ${done.documents} documents in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

async function local() {
  const roles = userRoles(settingValues(readDevSettings(root)));
  const stack = await startDevstack({
    dataDir: process.env.DEVSTACK_DATA_DIR ?? join(root, '.data'),
    databaseUrl: process.env.DATABASE_URL || undefined,
    externalEmbeddingDimension: roles.EMBEDDING?.dimensions,
    externalEmbeddingModel: roles.EMBEDDING?.model,
    allowModelDownload: process.env.DEVSTACK_OFFLINE !== '1',
    newVectorIndex: true,
    log: (line) => console.log(`[devstack] ${line}`),
  });
  const sql = postgres(stack.databaseUrl, { max: 2, prepare: false, onnotice: () => {} });
  try {
    const embedding = roles.EMBEDDING ?? (stack.embeddings ? { model: stack.embeddings.model } : undefined);
    const models = createModels({ baseUrl: stack.openaiBaseUrl, apiKey: stack.keys.services.modelApiKey, embedding });
    const vectors = createVectorStore({ url: stack.vectorUrl, token: stack.keys.services.vectorToken });
    await run({ sql, vectors, embed: models.embed }, 'the devstack (.data/vector)');
  } finally {
    await sql.end({ timeout: 1 });
    await stack.stop();
  }
}

async function production(file: string) {
  const settings = parseEnvFile(readFileSync(join(root, file), 'utf8'));
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('set DATABASE_URL to the Supabase connection string (the one Hyperdrive was made from)');
  for (const name of ['UPSTASH_VECTOR_REST_URL', 'UPSTASH_VECTOR_REST_TOKEN', 'OPENAI_API_KEY'] as const) {
    if (!settings[name]) throw new Error(`${file} does not set ${name}`);
  }
  const embeddingModel = settings.EMBEDDING_MODEL;
  const models = createModels({
    baseUrl: settings.OPENAI_BASE_URL || undefined,
    apiKey: settings.OPENAI_API_KEY as string,
    embedding: embeddingModel
      ? {
          model: embeddingModel,
          baseUrl: settings.EMBEDDING_BASE_URL || undefined,
          apiKey: settings.EMBEDDING_API_KEY || undefined,
          dimensions: settings.EMBEDDING_DIMENSIONS ? Number(settings.EMBEDDING_DIMENSIONS) : undefined,
        }
      : undefined,
  });
  const sql = postgres(databaseUrl, { max: 2, prepare: false, onnotice: () => {} });
  try {
    const vectors = createVectorStore({
      url: settings.UPSTASH_VECTOR_REST_URL as string,
      token: settings.UPSTASH_VECTOR_REST_TOKEN as string,
    });
    await run({ sql, vectors, embed: models.embed }, settings.UPSTASH_VECTOR_REST_URL as string);
  } finally {
    await sql.end({ timeout: 1 });
  }
}

try {
  await (flags.settings ? production(flags.settings) : local());
} catch (error) {
  console.error(`reindex: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
