import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface RunningPostgres {
  /** Connection string for clients; it always carries a password because wrangler's Hyperdrive insists on one. */
  url: string;
  engine: 'pglite' | 'postgres';
  stop(): Promise<void>;
}

export interface PostgresOptions {
  /** Any real Postgres; when set, PGlite is not started. */
  databaseUrl?: string;
  /** Where PGlite keeps its files; undefined keeps it in memory. */
  dataDir?: string;
  host: string;
  port: number;
}

export async function startPostgres(options: PostgresOptions): Promise<RunningPostgres> {
  if (options.databaseUrl) {
    return { url: withPassword(options.databaseUrl), engine: 'postgres', stop: async () => {} };
  }
  if (options.dataDir) await mkdir(options.dataDir, { recursive: true });
  const db = await PGlite.create(options.dataDir ?? 'memory://');
  // PGlite runs one query at a time; the socket server queues the rest, and more
  // than one connection is needed for the worker, the auth server and the pool.
  const server = new PGLiteSocketServer({ db, host: options.host, port: options.port, maxConnections: 64 });
  await server.start();
  return {
    url: `postgres://postgres:postgres@${options.host}:${options.port}/postgres`,
    engine: 'pglite',
    stop: async () => {
      await server.stop();
      await db.close();
    },
  };
}

function withPassword(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  if (!url.username) url.username = 'postgres';
  if (!url.password) url.password = 'postgres';
  return url.toString();
}
