import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import postgres from 'postgres';
import { createAuthServer } from './auth/server.ts';
import { declaredBuckets, ensureBuckets } from './buckets.ts';
import { createDnsServer } from './dns/server.ts';
import { DEFAULT_TEST_ZONE } from './dns/test-zone.ts';
import { createFaults } from './faults.ts';
import { type DevstackKeys, loadKeys } from './keys.ts';
import { createExtractiveEngine } from './models/extractive-engine.ts';
import { createModelServer } from './models/server.ts';
import { migrate } from './postgres/migrate.ts';
import { createPostgresServer, type RunningPostgres } from './postgres/server.ts';
import { createQStashServer } from './qstash/server.ts';
import { startRedisBackend } from './redis/backend.ts';
import { createRedisServer } from './redis/server.ts';
import { createStorageServer } from './storage/server.ts';
import { createVectorServer } from './vector/server.ts';

export interface DevstackOptions {
  dataDir: string;
  /** Use this Postgres instead of PGlite. */
  databaseUrl?: string;
  /** Keep PGlite in memory instead of under dataDir (tests). */
  ephemeral?: boolean;
  host?: string;
  /** The Supabase CLI's ports, so supabase-js and habits carry over. */
  apiPort?: number;
  postgresPort?: number;
  jwtExpirySeconds?: number;
  /** QStash retry backoff; tests make it fast. */
  qstashBackoffMs?: (retry: number) => number;
  /** Embedding model directory or hub id; default: see devstack/models. */
  embeddingModel?: string;
  /** An embedding model outside the devstack makes vectors of this size: the index is made for them. */
  externalEmbeddingDimension?: number;
  /** That model's name (EMBEDDING_MODEL), recorded with the index so that another model's index is refused. */
  externalEmbeddingModel?: string;
  /** A vector index made for another model is moved aside and a new one begun (`npm run reindex`). */
  newVectorIndex?: boolean;
  /** Fetch the embedding model from the hub once, when it is not in the cache (needs internet). */
  allowModelDownload?: boolean;
  /** The Redis behind the Upstash Redis REST front, instead of REDIS_URL; without either, a redis-server of its own if installed. */
  redisUrl?: string;
  log?: (line: string) => void;
}

export interface Devstack {
  /** Plays the role of the Supabase project URL. */
  supabaseUrl: string;
  authUrl: string;
  jwksUrl: string;
  issuer: string;
  databaseUrl: string;
  /** The same database through the proxy that the `postgres` fault takes down, a port per worker: what the workers use. */
  workerDatabaseUrls: Record<(typeof WORKERS)[number], string>;
  databaseEngine: RunningPostgres['engine'];
  keys: DevstackKeys;
  storageBucket: string;
  qstashUrl: string;
  vectorUrl: string;
  /** The Upstash Redis REST URL (UPSTASH_REDIS_REST_URL), or null: no Redis, and rate limiting is off. */
  redisUrl: string | null;
  redisToken: string;
  openaiBaseUrl: string;
  dohUrl: string;
  /** The embedding model and its dimension, or null: sparse retrieval only. */
  embeddings: { model: string; dimension: number } | null;
  visionModel: string;
  /** The extractive answer engine's model name. */
  textModel: string;
  /** The cross-encoder POST /openai/v1/rerank serves (RERANK_MODEL), or null: reranking unavailable. */
  rerankModel: string | null;
  /** Resolves when QStash has nothing pending or in flight. */
  queueIdle(): Promise<void>;
  stop(): Promise<void>;
}

/** The workers that reach the database through the fault proxy, each on a port of its own. */
const WORKERS = ['api', 'ingest', 'scoring'] as const;

/** The bucket the product stores into; supabase/config.toml declares it, with its size limit. */
export const STORAGE_BUCKET = 'documents';
const SUPABASE_CONFIG = new URL('../supabase/config.toml', import.meta.url).pathname;

export async function startDevstack(options: DevstackOptions): Promise<Devstack> {
  const host = options.host ?? '127.0.0.1';
  const apiPort = options.apiPort ?? 54321;
  const log = options.log ?? (() => {});
  const keys = await loadKeys(options.dataDir);

  const pg = await createPostgresServer({
    databaseUrl: options.databaseUrl,
    dataDir: options.ephemeral ? undefined : `${options.dataDir}/pglite`,
    host,
    port: options.postgresPort ?? 54322,
  });
  // Named prepared statements would collide on PGlite's single shared session.
  const sql = postgres(pg.url, { max: 4, prepare: false, onnotice: () => {} });
  try {
    await migrate(sql, log);
  } catch (error) {
    await sql.end();
    await pg.stop();
    throw error;
  }

  const supabaseUrl = `http://${host}:${apiPort}`;
  const issuer = `${supabaseUrl}/auth/v1`;
  const secrets = keys.services;
  const dataDir = options.ephemeral ? await ephemeralDir(options.dataDir) : options.dataDir;
  // A REDIS_URL that does not answer stops the start before the slow parts.
  const redisBackend = await startRedisBackend({
    redisUrl: options.redisUrl || process.env.REDIS_URL || undefined,
    dataDir: join(dataDir, 'redis'),
    log,
  }).catch(async (error: unknown) => {
    await sql.end();
    await pg.stop();
    throw error;
  });

  const models = await createModelServer({
    apiKey: secrets.modelApiKey,
    // With the user's own embedding model the devstack's is not loaded.
    embeddingModel: options.externalEmbeddingDimension ? 'off' : (options.embeddingModel ?? process.env.DEVSTACK_EMBEDDING_MODEL),
    cacheDir: join(options.dataDir, 'models'),
    allowDownload: options.allowModelDownload ?? false,
    // Paced like a hosted model (about 100 words a second), so streaming, time to first
    // token and a client's disconnect behave as they would in production.
    textEngine: createExtractiveEngine({ chunkDelayMs: Number(process.env.DEVSTACK_TOKEN_DELAY_MS ?? 10) }),
    rerankModel: process.env.DEVSTACK_RERANK_MODEL,
    log,
  });
  const vector = await createVectorServer({
    token: secrets.vectorToken,
    dataDir: join(dataDir, 'vector'),
    setAsideMismatch: options.newVectorIndex,
    indexType: models.embeddings || options.externalEmbeddingDimension ? 'HYBRID' : 'SPARSE',
    dimension: options.externalEmbeddingDimension ?? models.embeddings?.dimension,
    embeddingModel: options.externalEmbeddingDimension ? options.externalEmbeddingModel : models.embeddings?.model,
    log,
  });
  const qstash = createQStashServer({
    token: secrets.qstashToken,
    currentSigningKey: secrets.qstashCurrentSigningKey,
    nextSigningKey: secrets.qstashNextSigningKey,
    stateFile: join(dataDir, 'qstash', 'state.json'),
    backoffMs: options.qstashBackoffMs,
    log,
  });
  const redis = redisBackend && createRedisServer({ token: secrets.redisToken, redisUrl: redisBackend.url, log });
  const storage = createStorageServer({
    rootDir: join(dataDir, 'storage'),
    serviceRoleKey: keys.serviceRoleKey,
    anonKey: keys.anonKey,
    signingSecret: secrets.storageSigningSecret,
    publicUrl: `${supabaseUrl}/storage/v1`,
  });

  const faults = createFaults();
  const pgProxy = await pg.gate(WORKERS, (worker) => faults.admit('postgres', worker));
  faults.onSet('postgres', (worker) => pgProxy.cut(worker));
  const app = new Hono();
  app.get('/health', (c) => c.json({ ok: true }));
  app.route('/__devstack/faults', faults.app);
  app.use('/auth/v1/.well-known/jwks.json', faults.guard('auth'));
  app.route(
    '/auth/v1',
    createAuthServer({
      sql,
      privateJwk: keys.privateJwk,
      issuer,
      jwtExpirySeconds: options.jwtExpirySeconds ?? Number(process.env.DEVSTACK_JWT_EXPIRY ?? 3600),
      anonKey: keys.anonKey,
      serviceRoleKey: keys.serviceRoleKey,
    }),
  );
  app.use('/storage/v1/*', faults.guard('storage'));
  app.route('/storage/v1', storage);
  app.use('/qstash/*', faults.guard('qstash'));
  app.route('/qstash', qstash.app);
  app.use('/vector/*', faults.guard('vector'));
  app.route('/vector', vector.app);
  if (redis) {
    app.use('/redis/*', faults.guard('redis'));
    app.route('/redis', redis.app);
  }
  app.use('/openai/*', faults.guard('models'));
  app.route('/openai', models.app);
  app.use('/dns-query', faults.guard('dns'));
  app.route('/dns-query', createDnsServer({ zone: DEFAULT_TEST_ZONE }));
  const server = await listen(app, host, apiPort);
  await ensureBuckets(supabaseUrl, keys.serviceRoleKey, declaredBuckets(SUPABASE_CONFIG));

  return {
    supabaseUrl,
    authUrl: issuer,
    jwksUrl: `${issuer}/.well-known/jwks.json`,
    issuer,
    databaseUrl: pg.url,
    workerDatabaseUrls: pgProxy.urls,
    databaseEngine: pg.engine,
    keys,
    storageBucket: STORAGE_BUCKET,
    qstashUrl: `${supabaseUrl}/qstash`,
    vectorUrl: `${supabaseUrl}/vector`,
    redisUrl: redis ? `${supabaseUrl}/redis` : null,
    redisToken: secrets.redisToken,
    openaiBaseUrl: `${supabaseUrl}/openai/v1`,
    dohUrl: `${supabaseUrl}/dns-query`,
    embeddings: models.embeddings,
    visionModel: models.models.vision,
    textModel: models.models.text ?? 'devstack-extractive',
    rerankModel: models.models.rerank ?? null,
    queueIdle: () => qstash.idle(),
    stop: async () => {
      await qstash.stop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await vector.close();
      await redis?.close();
      await redisBackend?.stop();
      await models.close();
      await pgProxy.stop();
      await sql.end({ timeout: 1 });
      await pg.stop();
    },
  };
}

/** Ephemeral stacks (tests) still need a directory for files; it goes with the data dir. */
async function ephemeralDir(dataDir: string) {
  const dir = join(dataDir, 'ephemeral');
  await mkdir(dir, { recursive: true });
  return dir;
}

function listen(app: Hono, hostname: string, port: number) {
  return new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const server = serve({ fetch: app.fetch, hostname, port }, () => resolve(server));
    // Longer than clients pool idle connections (Node's default 5 s is not): workerd reused
    // connections this server had just closed, and a step that parsed for 10 s then failed.
    (server as import('node:http').Server).keepAliveTimeout = 65_000;
    server.once('error', reject);
  });
}
