import { type ChildProcess, spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdir, readFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { freePort } from '../ports.ts';
import { ping } from './ping.ts';

export interface SpawnedRedis {
  url: string;
  stop(): Promise<void>;
}

/** The first `redis-server` on the search path (PATH's syntax), or null. */
export async function findRedisServer(searchPath = process.env.PATH ?? ''): Promise<string | null> {
  for (const dir of searchPath.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, 'redis-server');
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return null;
}

/**
 * A redis-server of the devstack's own on a free loopback port, its files in `dir`. Nothing is
 * saved (`--save ""`, no AOF): rate-limit counters need not outlive the devstack. A port taken
 * between choosing and binding is tried again with another.
 */
export async function spawnRedisServer(binary: string, dir: string): Promise<SpawnedRedis> {
  await mkdir(dir, { recursive: true });
  const logFile = join(dir, 'redis-server.log');
  let lastError = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const args = ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'];
    const child = spawn(binary, [...args, '--dir', dir, '--logfile', logFile], { stdio: 'ignore' });
    const url = `redis://127.0.0.1:${port}`;
    // A devstack that dies without stop() must not leave its redis-server behind.
    const kill = () => child.kill('SIGKILL');
    process.once('exit', kill);
    const started = await untilAnswering(child, url);
    if (started === true) {
      return {
        url,
        stop: async () => {
          process.removeListener('exit', kill);
          await stopChild(child);
        },
      };
    }
    process.removeListener('exit', kill);
    await stopChild(child);
    lastError = started;
  }
  const tail = await readFile(logFile, 'utf8').then(
    (text) => text.trim().split('\n').slice(-3).join(' / '),
    () => '',
  );
  throw new Error(`${binary} did not start: ${lastError}${tail ? ` (${logFile}: ${tail})` : ''}`);
}

/** True once the server answers PING, or why it never will. */
async function untilAnswering(child: ChildProcess, url: string): Promise<true | string> {
  let exited: string | undefined;
  child.once('exit', (code, signal) => {
    exited = `it exited (${signal ?? code})`;
  });
  child.once('error', (error) => {
    exited = error.message;
  });
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (exited) return exited;
    if ((await ping(url, 500)) === true) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return exited ?? 'no answer to PING within 10 s';
}

async function stopChild(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}
