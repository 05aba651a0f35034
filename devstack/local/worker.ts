import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { devNull } from 'node:os';
import { join } from 'node:path';
import { buildWebAssets } from '../../web/build.ts';
import { freePort } from '../ports.ts';

const root = new URL('../..', import.meta.url).pathname;

export interface WorkerOptions {
  /** A wrangler config, relative to the project root. */
  config: string;
  port: number;
  host?: string;
  /** Every setting the worker gets, passed with --var (wrangler reads no .dev.vars of its own). */
  vars: Record<string, string>;
  /** Hyperdrive binding name → connection string for local dev. */
  hyperdrive?: Record<string, string>;
  /** wrangler's local state; separate dirs let several instances run at once. */
  persistTo?: string;
  /** Inherit stdio (interactive `npm run dev`) or keep the output for error reports (tests). */
  quiet?: boolean;
  /** With quiet, also write the output here. */
  logFile?: string;
}

export interface RunningWorker {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Runs a worker under `wrangler dev` (workerd), exactly as in development. */
export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  // The API worker's config names a static assets directory, which must exist before wrangler starts.
  await buildWebAssets();
  const host = options.host ?? '127.0.0.1';
  const args = [
    'dev',
    '--config',
    options.config,
    '--ip',
    host,
    '--port',
    String(options.port),
    '--inspector-port',
    String(await freePort()),
    '--show-interactive-dev-session=false',
    // /__scheduled runs the cron handler on demand (the sweep tests).
    '--test-scheduled',
    ...(options.persistTo ? ['--persist-to', options.persistTo] : []),
    // Settings come only from `vars`: left alone, wrangler would also read the .dev.vars beside the
    // config, which only the API worker's (at the root) has, and the shell's choices would be lost.
    '--env-file',
    devNull,
    ...Object.entries(options.vars).flatMap(([key, value]) => ['--var', `${key}:${value}`]),
  ];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    WRANGLER_SEND_METRICS: 'false',
    // The closed network makes wrangler's Request.cf look-up fail loudly at every start.
    CLOUDFLARE_CF_FETCH_ENABLED: 'false',
    // With --env-file given, this keeps wrangler from reading .env files too.
    CLOUDFLARE_LOAD_DEV_VARS_FROM_DOT_ENV: 'false',
  };
  for (const [binding, url] of Object.entries(options.hyperdrive ?? {})) {
    env[`CLOUDFLARE_HYPERDRIVE_LOCAL_CONNECTION_STRING_${binding}`] = url;
  }
  const child = spawn(join(root, 'node_modules/.bin/wrangler'), args, {
    cwd: root,
    env,
    stdio: options.quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit',
  });
  let output = '';
  const log = options.logFile ? createWriteStream(options.logFile) : undefined;
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
    log?.write(chunk);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);

  const url = `http://${host}:${options.port}`;
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
    });

  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited with ${child.exitCode}\n${output}`);
    try {
      const response = await fetch(`${url}/health`);
      if (response.ok) return { url, process: child, stop };
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await stop();
  throw new Error(`wrangler dev did not become ready within 60 s\n${output}`);
}
