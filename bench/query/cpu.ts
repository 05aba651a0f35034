/**
 * The API worker's own CPU time per `POST /query/`, from a CPU profile of its isolate (bench/query/query.ts
 * --profile). This is the time Workers bill as CPU: JavaScript, the runtime's code called from it, and
 * garbage collection on the isolate's thread; not wrangler's proxy, not the upstreams.
 *
 * At concurrency 1 requests follow each other, so request i's CPU is the isolate's busy time from its
 * start to the next one's: that includes recording its exchange, which runs after `done`. At higher
 * concurrency requests overlap and only the mean can be told.
 */
import { type Profile, sampleTick } from '../harness/cpu-profile.ts';

/** performance.now() of this process on the monotonic clock, in µs: V8 stamps profile samples with it. */
export function monotonicMicros(perfNow: number): number {
  const offset = Number(process.hrtime.bigint() / 1000n) - performance.now() * 1000;
  return perfNow * 1000 + offset;
}

/** Each sample's time and the busy µs it stands for (bench/harness/cpu-profile.ts, `sampleTick`). */
function busySamples(profile: Profile): { at: number; micros: number }[] {
  const tick = sampleTick(profile);
  const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
  const out: { at: number; micros: number }[] = [];
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (!idle.has(id)) out.push({ at, micros: Math.min(delta, tick) });
  });
  return out;
}

/** Busy ms of the isolate in the whole profile. */
export function busyMs(profile: Profile): number {
  return busySamples(profile).reduce((sum, s) => sum + s.micros, 0) / 1000;
}

/**
 * Busy ms between consecutive edges (performance.now() ms of this process, ascending): one figure
 * per interval. Null if the profile's clock does not line up with ours.
 */
export function busyBetween(profile: Profile, edges: number[]): number[] | null {
  const at = edges.map(monotonicMicros);
  // A profile on another clock would put every sample outside the intervals.
  if (profile.startTime > (at[0] as number) || profile.endTime < (at[at.length - 1] as number)) return null;
  const totals = new Array<number>(edges.length - 1).fill(0);
  let interval = 0;
  for (const sample of busySamples(profile)) {
    if (sample.at < (at[0] as number)) continue;
    while (interval < totals.length && sample.at >= (at[interval + 1] as number)) interval++;
    if (interval >= totals.length) break;
    totals[interval] = (totals[interval] as number) + sample.micros / 1000;
  }
  return totals;
}

/** A request's CPU at concurrency 1, whole and in its three phases. */
export interface RequestCpu {
  total: number;
  /** Request sent → `metadata`: auth, the access check, retrieval, the prompt. */
  beforeMetadata: number;
  /** `metadata` → `done`: the model call and relaying its tokens. */
  streaming: number;
  /** `done` → the next request: recording the exchange, queueing its scoring. */
  afterDone: number;
}

/** Each request's CPU, from its start to the next request's (the last to `end`), split at its events. */
export function requestCpu(
  profile: Profile,
  samples: { start: number; metadata: number | null; done: number | null }[],
  end: number,
): RequestCpu[] | null {
  const sorted = [...samples].sort((a, b) => a.start - b.start);
  const edges = sorted.flatMap((s) => [s.start, s.metadata ?? s.start, s.done ?? s.metadata ?? s.start]);
  const busy = busyBetween(profile, [...edges, end]);
  if (!busy) return null;
  return sorted.map((_, i) => {
    const [beforeMetadata, streaming, afterDone] = busy.slice(3 * i, 3 * i + 3) as [number, number, number];
    return { total: beforeMetadata + streaming + afterDone, beforeMetadata, streaming, afterDone };
  });
}
