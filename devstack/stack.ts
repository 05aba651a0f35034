import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import postgres from 'postgres';
import { createAuthApp } from './auth/app.ts';
import { type DevstackKeys, loadKeys } from './keys.ts';
import { migrate } from './migrate.ts';
import { type RunningPostgres, startPostgres } from './postgres.ts';

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
  log?: (line: string) => void;
}

export interface Devstack {
  /** Plays the role of the Supabase project URL. */
  supabaseUrl: string;
  authUrl: string;
  jwksUrl: string;
  issuer: string;
  databaseUrl: string;
  databaseEngine: RunningPostgres['engine'];
  keys: DevstackKeys;
  stop(): Promise<void>;
}

export async function startDevstack(options: DevstackOptions): Promise<Devstack> {
  const host = options.host ?? '127.0.0.1';
  const apiPort = options.apiPort ?? 54321;
  const log = options.log ?? (() => {});
  const keys = await loadKeys(options.dataDir);

  const pg = await startPostgres({
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
  const app = new Hono();
  app.get('/health', (c) => c.json({ ok: true }));
  app.route(
    '/auth/v1',
    createAuthApp({
      sql,
      privateJwk: keys.privateJwk,
      issuer,
      jwtExpirySeconds: options.jwtExpirySeconds ?? Number(process.env.DEVSTACK_JWT_EXPIRY ?? 3600),
      anonKey: keys.anonKey,
      serviceRoleKey: keys.serviceRoleKey,
    }),
  );
  const server = await listen(app, host, apiPort);

  return {
    supabaseUrl,
    authUrl: issuer,
    jwksUrl: `${issuer}/.well-known/jwks.json`,
    issuer,
    databaseUrl: pg.url,
    databaseEngine: pg.engine,
    keys,
    stop: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await sql.end({ timeout: 1 });
      await pg.stop();
    },
  };
}

function listen(app: Hono, hostname: string, port: number) {
  return new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const server = serve({ fetch: app.fetch, hostname, port }, () => resolve(server));
    server.once('error', reject);
  });
}

/** The settings the API worker needs to talk to this devstack. */
export function apiWorkerVars(stack: Devstack): Record<string, string> {
  return { AUTH_JWKS_URL: stack.jwksUrl, AUTH_ISSUER: stack.issuer };
}
