import { mkdir } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketHandler } from '@electric-sql/pglite-socket';
import { PGliteScheduler } from './pglite-scheduler.ts';

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
  const server = await serveWireProtocol(db, options.host, options.port);
  return {
    url: `postgres://postgres:postgres@${options.host}:${options.port}/postgres`,
    engine: 'pglite',
    stop: async () => {
      await server.close();
      await db.close();
    },
  };
}

/**
 * pglite-socket's handler speaks the wire protocol for each connection; the
 * scheduler decides whose turn it is on PGlite's single session.
 */
async function serveWireProtocol(db: PGlite, host: string, port: number): Promise<{ close(): Promise<void> }> {
  const scheduler = new PGliteScheduler(db);
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    // The handler only calls enqueue, clearQueueForHandler, clearTransactionIfNeeded and getQueueLength.
    const handler = new PGLiteSocketHandler({ queryQueue: scheduler as never, closeOnDetach: true });
    void handler.attach(socket);
  });
  server.maxConnections = 128;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    // Clients such as wrangler keep their connections open; stopping must not wait on them.
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

function withPassword(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  if (!url.username) url.username = 'postgres';
  if (!url.password) url.password = 'postgres';
  return url.toString();
}
