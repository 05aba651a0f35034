/**
 * What bench/query/query.ts measures around its requests: each request's share of the model's and Postgres's
 * time (from the timing proxies), the CPU the processes used, the floor of a round trip, and how busy
 * Postgres was.
 */
import { treeCpu, workerRuntimePid } from './processes.ts';
import type { Sample } from './query-client.ts';
import { percentile } from './stats.ts';
import { type DbProxy, type ModelCall, overlap } from './timing-proxies.ts';

export interface Measured {
  sample: Sample;
  call: ModelCall;
  /** Client: request start → `done`. */
  e2e: number;
  clientTtft: number;
  /** Upstream model time as the proxy saw it: request in → last byte out. */
  modelMs: number;
  overhead: number;
  /** Before `metadata`: auth, body, access check, prompt, minus the reported embedding and retrieval. */
  preOverhead: number;
  /** `metadata` → `done` minus the model's time: the model call's set-up, the AI SDK, the SSE relay. */
  streamOverhead: number;
  /** Only at concurrency 1: time this request's own Postgres connections were waiting for the server. */
  dbMs: number | null;
  dbBeforeMetadataMs: number | null;
  /** The part of dbMs spent on connection start-up (to the first ReadyForQuery); Hyperdrive pools connections in production. */
  dbConnectMs: number | null;
}

/** The requests that completed, each matched with its model call; failed requests are left out. */
export function measure(samples: Sample[], calls: ModelCall[], db: DbProxy, concurrency: number): Measured[] {
  const byQuestion = new Map<string, ModelCall[]>();
  for (const call of calls) {
    if (call.question === null) continue;
    byQuestion.set(call.question, [...(byQuestion.get(call.question) ?? []), call]);
  }
  const measured: Measured[] = [];
  for (const sample of samples) {
    if (sample.error || sample.done === null || sample.metadata === null || sample.firstToken === null) continue;
    const call = (byQuestion.get(sample.question.question) ?? []).find((c) => c.start >= sample.start && c.end <= sample.end);
    if (!call) throw new Error(`no model call matches the request for "${sample.question.question}"`);
    const modelMs = call.end - call.start;
    const upstreamBefore = (sample.embeddingMs ?? 0) + (sample.retrievalMs ?? 0);
    const e2e = sample.done - sample.start;
    let dbMs: number | null = null;
    let dbBeforeMetadataMs: number | null = null;
    let dbConnectMs: number | null = null;
    if (concurrency === 1) {
      // One request at a time: the connections opened during it are its own (the recording of the
      // previous exchange runs on the previous request's connections).
      const own = db.connections.filter((c) => c.opened >= sample.start && c.opened <= (sample.done as number));
      dbMs = own.reduce((sum, c) => sum + overlap(c.busy, sample.start, sample.done as number), 0);
      dbBeforeMetadataMs = own.reduce((sum, c) => sum + overlap(c.busy, sample.start, sample.metadata as number), 0);
      dbConnectMs = own.reduce((sum, c) => sum + overlap(c.busy.slice(0, 1), sample.start, sample.done as number), 0);
    }
    measured.push({
      sample,
      call,
      e2e,
      clientTtft: sample.firstToken - sample.start,
      modelMs,
      overhead: e2e - upstreamBefore - modelMs,
      preOverhead: sample.metadata - sample.start - upstreamBefore,
      streamOverhead: sample.done - sample.metadata - modelMs,
      dbMs,
      dbBeforeMetadataMs,
      dbConnectMs,
    });
  }
  return measured;
}

export interface CpuWindow {
  /** CPU milliseconds per measured request: this process (devstack, proxies, client) and the API worker's processes. */
  perRequestMs: Record<string, number>;
}

/** Opens a window on the CPU time used; the function it returns closes it, dividing by the requests made in it. */
export function cpuWindow(apiWranglerPid: number) {
  // wrangler dev runs two workerd processes: a proxy in front, and the runtime of the worker itself.
  const workerd = workerRuntimePid(apiWranglerPid);
  const names = new Map<number, string>(
    (workerd?.all ?? []).map((pid) => [pid, pid === workerd?.pid ? 'workerd (the worker)' : 'workerd (wrangler proxy)']),
  );
  const ownBefore = process.cpuUsage();
  const apiBefore = treeCpu(apiWranglerPid, names);
  return (requests: number): CpuWindow => {
    const own = process.cpuUsage(ownBefore);
    const perRequestMs: Record<string, number> = {
      'bench process (devstack, proxies, client)': (own.user + own.system) / 1000 / requests,
    };
    for (const [name, seconds] of treeCpu(apiWranglerPid, names)) {
      perRequestMs[`API worker: ${name}`] = ((seconds - (apiBefore.get(name) ?? 0)) * 1000) / requests;
    }
    return { perRequestMs };
  };
}

/** Round trips of `GET /health` through `wrangler dev`: the floor any request pays on this stack. */
export async function httpFloor(apiUrl: string, count: number): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const response = await fetch(`${apiUrl}/health`);
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`GET /health: ${response.status}`);
    times.push(performance.now() - started);
  }
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

/** Share of [from, to] during which at least one of the API worker's Postgres connections waited for the server. */
export function dbBusyShare(db: DbProxy, from: number, to: number): number {
  const spans = db.connections
    .flatMap((c) => c.busy)
    .map(([start, end]): [number, number] => [Math.max(start, from), Math.min(end, to)])
    .filter(([start, end]) => end > start)
    .sort((a, b) => a[0] - b[0]);
  let covered = 0;
  let reach = from;
  for (const [start, end] of spans) {
    if (end <= reach) continue;
    covered += end - Math.max(start, reach);
    reach = end;
  }
  return covered / (to - from);
}
