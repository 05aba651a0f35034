/**
 * The process bench/load/load.ts runs a local deployment in, as `npm run dev` does: the devstack in this
 * Node process, the API and ingest workers under `wrangler dev` as its children. It is a process of
 * its own so that the client's work does not share the devstack's event loop, so that its CPU time is
 * its own, and so that it can be profiled. The deployment comes from the tree at `root`, which lets the
 * bench run the same client against an older checkout.
 *
 * Started by bench/load/stack.ts with one JSON argument (ChildConfig) and an IPC channel. It answers
 * `{ ready }` once the workers answer, and takes `profile-start`, `profile-stop` (writes a .cpuprofile
 * of this process's main thread) and `stop`.
 */
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type * as Deployment from '../../devstack/local/deployment.ts';

export interface ChildConfig {
  /** The checkout whose devstack and workers run. */
  root: string;
  /** The devstack's port: the parent put its model timing proxy in front of it already. */
  apiPort: number;
  /** The timing proxy's origin, which the API worker uses for its model (and, traced, its other upstreams). */
  upstreamProxy: string;
  databaseUrl?: string;
  /** Workers connect to the database itself, not through the devstack's fault proxy (where there is one). */
  directDatabase?: boolean;
  /** Storage, QStash and Vector calls of the API worker through the timing proxy too. */
  traceUpstreams?: boolean;
}

export interface ChildReady {
  apiUrl: string;
  supabaseUrl: string;
  anonKey: string;
  databaseUrl: string;
  embeddings: string;
  wranglerPids: { api: number; ingest: number };
}

export type ChildCommand =
  | { kind: 'profile-start' }
  | { kind: 'profile-stop'; file: string }
  | { kind: 'lag-reset' }
  | { kind: 'lag-read' }
  | { kind: 'stop' };

/** How late the devstack's event loop ran its timers since the last reset, in ms. */
export interface EventLoopLag {
  p50: number;
  p99: number;
  max: number;
}

const config = JSON.parse(process.argv[2] as string) as ChildConfig;
const send = (message: object) => process.send?.(message);

const { startLocalDeployment, fastRetries, UNLIMITED_RATES } = (await import(
  pathToFileURL(join(config.root, 'devstack/local/deployment.ts')).href
)) as typeof Deployment;

const deployment = await startLocalDeployment({
  devstack: { databaseUrl: config.databaseUrl, apiPort: config.apiPort, qstashBackoffMs: fastRetries },
  scoring: false,
  vars: UNLIMITED_RATES,
  quiet: true,
  logFiles: { api: process.env.BENCH_API_LOG, ingest: process.env.BENCH_INGEST_LOG },
  // The model endpoint through the parent's timing proxy, so that the model's own time is known; with
  // traceUpstreams also Storage, QStash and Vector, so that an upload's calls are timed too.
  beforeWorkers: async (stack) => {
    const through = (url: string) => `${config.upstreamProxy}${new URL(url).pathname}`;
    const traced: Record<string, string> = config.traceUpstreams
      ? {
          SUPABASE_URL: through(stack.supabaseUrl),
          QSTASH_URL: through(stack.qstashUrl),
          UPSTASH_VECTOR_REST_URL: through(stack.vectorUrl),
        }
      : {};
    return {
      ...(config.directDatabase ? { databaseUrls: { api: stack.databaseUrl, ingest: stack.databaseUrl } } : {}),
      vars: { api: { OPENAI_BASE_URL: through(stack.openaiBaseUrl), ...traced } },
    };
  },
});
const { stack } = deployment;
const session = new Session();
session.connect();
// Every request the devstack serves waits this long for its turn on the main thread, and so does
// every message the main thread relays.
const lag = monitorEventLoopDelay({ resolution: 1 });
lag.enable();

const ready: ChildReady = {
  apiUrl: deployment.api.url,
  supabaseUrl: stack.supabaseUrl,
  anonKey: stack.keys.anonKey,
  databaseUrl: stack.databaseUrl,
  embeddings: stack.embeddings ? `${stack.embeddings.model} (${stack.embeddings.dimension} d)` : 'none (sparse vectors only)',
  wranglerPids: { api: deployment.api.process.pid as number, ingest: deployment.ingest.process.pid as number },
};
send({ ready });

async function handle(command: ChildCommand): Promise<EventLoopLag | undefined> {
  if (command.kind === 'lag-reset') lag.reset();
  else if (command.kind === 'lag-read') {
    return { p50: lag.percentile(50) / 1e6, p99: lag.percentile(99) / 1e6, max: lag.max / 1e6 };
  } else if (command.kind === 'profile-start') {
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  } else if (command.kind === 'profile-stop') {
    const { profile } = await session.post('Profiler.stop');
    await writeFile(command.file, JSON.stringify(profile));
  } else {
    session.disconnect();
    await deployment.stop();
    process.exit(0);
  }
  return undefined;
}

process.on('message', (command: ChildCommand) => {
  handle(command).then(
    (value) => send({ done: command.kind, value }),
    (error: unknown) => send({ failed: command.kind, error: String(error) }),
  );
});
// The parent went away without saying stop: do not outlive it.
process.on('disconnect', () => void deployment.stop().finally(() => process.exit(1)));
