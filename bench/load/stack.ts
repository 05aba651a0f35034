/**
 * bench/load/load.ts's side of the deployment it measures: bench/load/child.ts started as a process of its
 * own (the devstack, and the workers under `wrangler dev` below it), a timing proxy in this process in
 * front of the API worker's HTTP upstreams, and, for a real PostgreSQL, a fresh database dropped afterwards.
 */
import { type ChildProcess, fork } from 'node:child_process';
import postgres from 'postgres';
import { createDatabase } from '../../devstack/harness/real-postgres.ts';
import { freePort } from '../../devstack/ports.ts';
import { type ModelProxy, startModelProxy } from '../harness/timing-proxies.ts';
import type { ChildCommand, ChildConfig, ChildReady, EventLoopLag } from './child.ts';

const CHILD = new URL('./child.ts', import.meta.url).pathname;
const HERE = new URL('../..', import.meta.url).pathname;

export interface LoadStackOptions {
  root: string;
  /** A PostgreSQL server; a database of its own is created on it for this stack. Default: PGlite. */
  databaseUrl?: string;
  /** The devstack's DEVSTACK_EMBEDDING_MODEL ('off': sparse vectors only). */
  embeddingModel: string;
  tokenDelayMs: number;
  /** Workers bypass the devstack's Postgres fault proxy. */
  directDatabase?: boolean;
  /** The API worker's Storage, QStash and Vector calls through the timing proxy too. */
  traceUpstreams?: boolean;
}

export interface LoadStack extends ChildReady {
  /** The Node process that runs the devstack. */
  pid: number;
  /** In front of the API worker's model endpoint (and, traced, its other HTTP upstreams): each call timed. */
  upstream: ModelProxy;
  /** Starts profiling the devstack's main thread. */
  profileStart(): Promise<void>;
  /** Writes what was profiled since profileStart() to `file` (.cpuprofile). */
  profileStop(file: string): Promise<void>;
  /** The devstack main thread's event-loop delay since lagReset(). */
  lagReset(): Promise<void>;
  lagRead(): Promise<EventLoopLag>;
  stop(): Promise<void>;
}

export async function startLoadStack(options: LoadStackOptions): Promise<LoadStack> {
  const database = options.databaseUrl ? await freshDatabase(options.databaseUrl) : undefined;
  const apiPort = await freePort();
  const upstream = await startModelProxy(`http://127.0.0.1:${apiPort}`);
  const config: ChildConfig = {
    root: options.root,
    apiPort,
    upstreamProxy: upstream.url,
    databaseUrl: database?.url,
    directDatabase: options.directDatabase,
    traceUpstreams: options.traceUpstreams,
  };
  const child = fork(CHILD, [JSON.stringify(config)], {
    cwd: HERE,
    execArgv: ['--import', 'tsx'],
    env: {
      ...process.env,
      DEVSTACK_EMBEDDING_MODEL: options.embeddingModel,
      DEVSTACK_TOKEN_DELAY_MS: String(options.tokenDelayMs),
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const cleanUp = async () => {
    await upstream.stop();
    await database?.drop();
  };
  let ready: ChildReady;
  try {
    ready = await waitFor<{ ready: ChildReady }>(child, (m) => 'ready' in m, 180_000).then((m) => m.ready);
  } catch (error) {
    child.kill('SIGKILL');
    await cleanUp();
    throw error;
  }
  const command = async (message: ChildCommand) => {
    const answer = waitFor<{ done?: string; value?: unknown; failed?: string; error?: string }>(
      child,
      (m) => m.done === message.kind || m.failed === message.kind,
      120_000,
    );
    child.send(message);
    const result = await answer;
    if (result.failed) throw new Error(`${message.kind}: ${result.error}`);
    return result.value;
  };
  return {
    ...ready,
    pid: child.pid as number,
    upstream,
    profileStart: async () => {
      await command({ kind: 'profile-start' });
    },
    profileStop: async (file) => {
      await command({ kind: 'profile-stop', file });
    },
    lagReset: async () => {
      await command({ kind: 'lag-reset' });
    },
    lagRead: async () => (await command({ kind: 'lag-read' })) as EventLoopLag,
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send({ kind: 'stop' } satisfies ChildCommand);
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
      await cleanUp();
    },
  };
}

/** The first IPC message that `matches`; rejects when the child exits first or the time runs out. */
function waitFor<T>(child: ChildProcess, matches: (message: T) => boolean, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: T) => {
      if (!matches(message)) return;
      finish();
      resolve(message);
    };
    const onExit = (code: number | null) => {
      finish();
      reject(new Error(`the deployment process exited (${code}) before answering`));
    };
    const timer = setTimeout(() => {
      finish();
      reject(new Error(`the deployment process did not answer within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    const finish = () => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** A new database on the server of `serverUrl`, so that runs do not see each other's rows. */
function freshDatabase(serverUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
  return createDatabase(postgres(serverUrl, { max: 1, connect_timeout: 5, onnotice: () => {} }), serverUrl, 'rag_load');
}
