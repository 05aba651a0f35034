import { Worker } from 'node:worker_threads';
import type { PGliteThreadCommand, PGliteThreadOptions, PGliteThreadReply } from './pglite-thread.ts';
import { type PostgresProxy, startPostgresProxy } from './proxy.ts';

export interface RunningPostgres {
  /** Connection string for clients; it always carries a password because wrangler's Hyperdrive insists on one. */
  url: string;
  engine: 'pglite' | 'postgres';
  /**
   * A port per named client (the workers), each new connection asked to `admit` first, and a
   * way to cut a client's open connections (done when its promise resolves): the devstack's
   * `postgres` fault. PGlite's thread listens on them itself; any other Postgres is reached through a relay.
   */
  gate<C extends string>(clients: readonly C[], admit: (client: C) => boolean): Promise<PostgresProxy<C>>;
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

const THREAD = new URL('./pglite-thread.ts', import.meta.url);

export async function createPostgresServer(options: PostgresOptions): Promise<RunningPostgres> {
  if (options.databaseUrl) {
    const url = withPassword(options.databaseUrl);
    return {
      url,
      engine: 'postgres',
      gate: (clients, admit) => startPostgresProxy({ upstream: url, host: options.host, clients, admit }),
      stop: async () => {},
    };
  }
  const thread = await startThread({ dataDir: options.dataDir, host: options.host, port: options.port });
  const url = `postgres://postgres:postgres@${options.host}:${options.port}/postgres`;
  return {
    url,
    engine: 'pglite',
    gate: async <C extends string>(clients: readonly C[], admit: (client: C) => boolean) => {
      /** Cuts sent to the thread and not yet done. */
      const cuts = new Map<number, () => void>();
      let nextCut = 1;
      thread.on('message', (message: PGliteThreadReply) => {
        if (message.type === 'admit') send(thread, { type: 'admitted', id: message.id, ok: admit(message.client as C) });
        if (message.type === 'cut') cuts.get(message.id)?.();
      });
      // A thread that is gone has no connection left to cut.
      thread.once('exit', () => {
        for (const done of cuts.values()) done();
      });
      const answer = await command(thread, { type: 'listen', clients: [...clients] });
      if (answer.type !== 'listening')
        throw new Error(answer.type === 'error' ? answer.error : 'the PGlite thread did not listen');
      const urls = {} as Record<C, string>;
      for (const client of clients) {
        const own = new URL(url);
        own.port = String(answer.ports[client]);
        urls[client] = own.toString();
      }
      return {
        urls,
        // Resolves once the thread has reset them. A query sent before that could reach the thread
        // ahead of the message, be answered, and make the outage start late.
        cut: (match?: string) =>
          new Promise<void>((resolve) => {
            const id = nextCut++;
            cuts.set(id, () => {
              cuts.delete(id);
              resolve();
            });
            send(thread, { type: 'cut', id, ...(match ? { match } : {}) });
          }),
        // The thread closes the clients' ports when it stops.
        stop: async () => {},
      };
    },
    stop: async () => {
      await command(thread, { type: 'stop' }).catch(() => {});
      await thread.terminate();
    },
  };
}

const send = (thread: Worker, message: PGliteThreadCommand) => thread.postMessage(message);

/** PGlite and its server in a worker thread (devstack/postgres/pglite-thread.ts), once it listens. */
async function startThread(options: PGliteThreadOptions): Promise<Worker> {
  const thread = new Worker(THREAD, { workerData: options });
  const answer = await reply(thread).catch(async (error: unknown) => {
    await thread.terminate();
    throw error;
  });
  if (answer.type === 'error') {
    await thread.terminate();
    // The code (EADDRINUSE) is what devstack/cli.ts explains.
    throw Object.assign(new Error(answer.error), answer.code ? { code: answer.code } : {});
  }
  return thread;
}

/** Sends a command and waits for its answer. */
function command(thread: Worker, message: PGliteThreadCommand): Promise<PGliteThreadReply> {
  const answered = reply(thread);
  send(thread, message);
  return answered;
}

/** The thread's next answer to a command (not a question about a connection, nor a cut done); its failure or exit before one is an error. */
function reply(thread: Worker): Promise<PGliteThreadReply> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: PGliteThreadReply) => {
      if (message.type === 'admit' || message.type === 'cut') return;
      done();
      resolve(message);
    };
    const onError = (error: Error) => {
      done();
      reject(error);
    };
    const onExit = (code: number) => {
      done();
      reject(new Error(`the PGlite thread exited (${code})`));
    };
    const done = () => {
      thread.off('message', onMessage);
      thread.off('error', onError);
      thread.off('exit', onExit);
    };
    thread.on('message', onMessage);
    thread.on('error', onError);
    thread.on('exit', onExit);
  });
}

function withPassword(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  if (!url.username) url.username = 'postgres';
  if (!url.password) url.password = 'postgres';
  return url.toString();
}
