/**
 * PGlite and its wire-protocol server in a worker thread of their own, so that the
 * database's work (Postgres itself runs as WebAssembly) and its sockets do not share the
 * devstack's event loop with Storage, QStash, Vector and the models, nor wait for them.
 * The workers' own ports listen here too, so their bytes never cross that event loop
 * either; only the decision to admit a new connection (the `postgres` fault) does.
 * devstack/postgres/server.ts starts it and speaks the messages below.
 */
import { writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { serveWireProtocol } from './pglite-wire.ts';

export interface PGliteThreadOptions {
  /** Where PGlite keeps its files; undefined keeps it in memory. */
  dataDir?: string;
  host: string;
  port: number;
}

/** To the thread. */
export type PGliteThreadCommand =
  | { type: 'listen'; clients: string[] }
  | { type: 'admitted'; id: number; ok: boolean }
  | { type: 'cut'; id: number; match?: string }
  | { type: 'stop' };

/**
 * From the thread: the answer to start-up, `listen` and `stop`; a question about a new connection;
 * or word that cut `id` is done (its connections reset).
 */
export type PGliteThreadReply =
  | { type: 'ready' }
  | { type: 'error'; error: string; code?: string }
  | { type: 'listening'; ports: Record<string, number> }
  | { type: 'stopped' }
  | { type: 'admit'; id: number; client: string }
  | { type: 'cut'; id: number };

const port = parentPort as NonNullable<typeof parentPort>;
const options = workerData as PGliteThreadOptions;
const post = (reply: PGliteThreadReply) => port.postMessage(reply);

try {
  // Named for `top -H` and the load bench's per-thread CPU (Linux; elsewhere the name stays).
  writeFileSync('/proc/thread-self/comm', 'pglite');
} catch {}

try {
  if (options.dataDir) await mkdir(options.dataDir, { recursive: true });
  const db = await PGlite.create(options.dataDir ?? 'memory://');
  const server = await serveWireProtocol(db, options.host, options.port).catch(async (error: unknown) => {
    await db.close();
    throw error;
  });
  const questions = new Map<number, (ok: boolean) => void>();
  let nextQuestion = 1;
  const admit = (client: string) =>
    new Promise<boolean>((resolve) => {
      const id = nextQuestion++;
      questions.set(id, resolve);
      post({ type: 'admit', id, client });
    });
  port.on('message', (command: PGliteThreadCommand) => {
    if (command.type === 'admitted') {
      questions.get(command.id)?.(command.ok);
      questions.delete(command.id);
    } else if (command.type === 'cut') {
      // Answered once done, so that setting the fault returns only after the reset (devstack/postgres/server.ts).
      server.cut(command.match);
      post({ type: 'cut', id: command.id });
    } else if (command.type === 'listen') {
      void Promise.all(command.clients.map(async (client) => [client, await server.listenFor(client, admit)] as const)).then(
        (ports) => post({ type: 'listening', ports: Object.fromEntries(ports) }),
        (error: unknown) => post({ type: 'error', error: error instanceof Error ? error.message : String(error) }),
      );
    } else if (command.type === 'stop') {
      void server
        .close()
        .then(() => db.close())
        .finally(() => post({ type: 'stopped' }));
    }
  });
  post({ type: 'ready' });
} catch (error) {
  const { message, code } = error as NodeJS.ErrnoException;
  post({ type: 'error', error: message ?? String(error), ...(code ? { code } : {}) });
}
