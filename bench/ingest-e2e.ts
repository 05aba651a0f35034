/**
 * The whole local stack for the ingestion benchmark, a local deployment like the tests' (devstack in
 * this process, the API and ingest workers under `wrangler dev`), and a client that talks to it over
 * HTTP like any user: sign up, create a collection, upload, poll the job.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fastRetries, type LocalDeploymentOptions, startLocalDeployment } from '../devstack/deployment.ts';

export interface BenchStack {
  apiUrl: string;
  supabaseUrl: string;
  anonKey: string;
  /** The wrangler processes of the API and ingest workers; their workerd children run the invocations. */
  apiWranglerPid: number;
  ingestWranglerPid: number;
  embeddings: string;
  stop(): Promise<void>;
}

/**
 * No scoring worker: answers are recorded but not scored, so scoring does not compete for the cores.
 * `options` puts something between the workers and the devstack, or uses another database.
 */
export async function startBenchStack(
  options: Pick<LocalDeploymentOptions, 'beforeWorkers'> & { databaseUrl?: string } = {},
): Promise<BenchStack> {
  const deployment = await startLocalDeployment({
    devstack: { databaseUrl: options.databaseUrl, qstashBackoffMs: fastRetries },
    scoring: false,
    beforeWorkers: options.beforeWorkers,
    quiet: true,
    logFiles: { api: process.env.BENCH_API_LOG, ingest: process.env.BENCH_INGEST_LOG },
  });
  const { stack } = deployment;
  return {
    apiUrl: deployment.api.url,
    supabaseUrl: stack.supabaseUrl,
    anonKey: stack.keys.anonKey,
    apiWranglerPid: deployment.api.process.pid as number,
    ingestWranglerPid: deployment.ingest.process.pid as number,
    embeddings: stack.embeddings ? `${stack.embeddings.model} (${stack.embeddings.dimension} d)` : 'none (sparse vectors only)',
    stop: deployment.stop,
  };
}

export async function signUp(stack: BenchStack): Promise<string> {
  const response = await fetch(`${stack.supabaseUrl}/auth/v1/signup`, {
    method: 'POST',
    headers: { apikey: stack.anonKey, 'Content-Type': 'application/json' },
    body: JSON.stringify({ email: `bench-${crypto.randomUUID().slice(0, 8)}@example.com`, password: 'correct horse battery' }),
  });
  const body = (await response.json()) as { access_token?: string };
  if (!response.ok || !body.access_token) throw new Error(`sign-up failed: ${response.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

export async function createCollection(stack: BenchStack, token: string, name: string): Promise<string> {
  const response = await fetch(`${stack.apiUrl}/collections/`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  const body = (await response.json()) as { id?: string };
  if (!response.ok || !body.id) throw new Error(`creating a collection failed: ${response.status} ${JSON.stringify(body)}`);
  return body.id;
}

export interface Job {
  job_id: string;
  status: 'queued' | 'processing' | 'succeeded' | 'partial' | 'failed';
  chunks_total: number;
  chunks_processed: number;
  error_message: string | null;
}

const TERMINAL = new Set(['succeeded', 'partial', 'failed']);

async function upload(stack: BenchStack, token: string, collectionId: string, name: string, bytes: Uint8Array) {
  const form = new FormData();
  form.append('file', new Blob([bytes as Uint8Array<ArrayBuffer>]), name);
  const response = await fetch(`${stack.apiUrl}/ingest/?collection_id=${collectionId}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}` },
    body: form,
  });
  const body = (await response.json()) as { job_id?: string };
  if (!response.ok || !body.job_id) throw new Error(`upload of ${name} failed: ${response.status} ${JSON.stringify(body)}`);
  return body.job_id;
}

async function job(stack: BenchStack, token: string, jobId: string): Promise<Job> {
  const response = await fetch(`${stack.apiUrl}/ingest/jobs/${jobId}`, { headers: { Authorization: `Bearer ${token}` } });
  if (!response.ok) throw new Error(`GET /ingest/jobs/${jobId}: ${response.status} ${await response.text()}`);
  return (await response.json()) as Job;
}

export interface IngestedFile {
  name: string;
  bytes: number;
  job: Job;
  /** From the start of its upload to the poll that saw it terminal. */
  ms: number;
}

export interface IngestRun {
  /** From the first upload's start to the poll that saw the last job terminal. */
  wallMs: number;
  files: IngestedFile[];
}

/** Uploads the files one after another, then polls every job until all are terminal. */
export async function ingestAll(
  stack: BenchStack,
  token: string,
  collectionId: string,
  files: { name: string; bytes: Uint8Array }[],
  options: { pollMs?: number; timeoutMs?: number; onPoll?: (name: string, job: Job) => void } = {},
): Promise<IngestRun> {
  const pollMs = options.pollMs ?? 100;
  const start = performance.now();
  const deadline = Date.now() + (options.timeoutMs ?? 600_000);
  const pending = new Map<string, { name: string; bytes: number; started: number }>();
  for (const file of files) {
    const started = performance.now();
    pending.set(await upload(stack, token, collectionId, file.name, file.bytes), {
      name: file.name,
      bytes: file.bytes.byteLength,
      started,
    });
  }
  const done: IngestedFile[] = [];
  while (pending.size > 0) {
    if (Date.now() > deadline) throw new Error(`jobs did not finish in time: ${[...pending.values()].map((p) => p.name)}`);
    for (const [id, file] of [...pending]) {
      const state = await job(stack, token, id);
      options.onPoll?.(file.name, state);
      if (!TERMINAL.has(state.status)) continue;
      done.push({ name: file.name, bytes: file.bytes, job: state, ms: performance.now() - file.started });
      pending.delete(id);
    }
    if (pending.size > 0) await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
  return { wallMs: performance.now() - start, files: done };
}

/**
 * The workerd process that runs the worker's code under a `wrangler dev` process. Wrangler starts two:
 * a proxy in front, and the runtime of the worker itself, the one started with an inspector.
 */
export function workerRuntimePid(wranglerPid: number): { pid: number; all: number[] } | null {
  const all = workerdPids(wranglerPid);
  const runtime = all.find((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--inspector-addr');
    } catch {
      return false;
    }
  });
  const pid = runtime ?? all.at(-1);
  return pid === undefined ? null : { pid, all };
}

/** The workerd processes under a wrangler process (its descendants), from /proc. */
export function workerdPids(rootPid: number): number[] {
  const children = new Map<number, number[]>();
  const names = new Map<number, string>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read around the last ')'.
      const close = stat.lastIndexOf(')');
      const ppid = Number(stat.slice(close + 2).split(' ')[1]);
      names.set(Number(entry), stat.slice(stat.indexOf('(') + 1, close));
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // the process ended meanwhile
    }
  }
  const found: number[] = [];
  const queue = [rootPid];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    for (const child of children.get(pid) ?? []) {
      if (names.get(child) === 'workerd') found.push(child);
      queue.push(child);
    }
  }
  return found;
}

export function statusBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
  return match ? Number(match[1]) * 1024 : Number.NaN;
}

export interface RssWindow {
  /** VmRSS when the window opened. */
  start: number;
  /** Highest sampled VmRSS. */
  sampledPeak: number;
  /** The kernel's peak (VmHWM, reset at the start), or null where it could not be reset. */
  kernelPeak: number | null;
}

/** Samples a process's resident memory every `everyMs` from now until stop(); mark() reads the peak so far. */
export function watchRss(pid: number, everyMs = 20): { mark(): number; stop(): RssWindow } {
  let reset = true;
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    reset = false;
  }
  const start = statusBytes(pid, 'VmRSS');
  let peak = start;
  const read = () => {
    try {
      peak = Math.max(peak, statusBytes(pid, 'VmRSS'));
    } catch {
      // gone
    }
  };
  const timer = setInterval(read, everyMs);
  return {
    mark() {
      read();
      return peak;
    },
    stop() {
      clearInterval(timer);
      read();
      let kernelPeak: number | null = null;
      try {
        if (reset) kernelPeak = statusBytes(pid, 'VmHWM');
      } catch {
        kernelPeak = null;
      }
      return { start, sampledPeak: peak, kernelPeak };
    },
  };
}
