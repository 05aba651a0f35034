/**
 * The API worker's own CPU time per `POST /query/`, from a CPU profile of its isolate (bench/query.ts
 * --profile). This is the time Workers bill as CPU: JavaScript, the runtime's code called from it, and
 * garbage collection on the isolate's thread; not wrangler's proxy, not the upstreams.
 *
 * At concurrency 1 requests follow each other, so request i's CPU is the isolate's busy time from its
 * start to the next one's: that includes recording its exchange, which runs after `done`. At higher
 * concurrency requests overlap and only the mean can be told.
 */
import type { Profile } from './load-profile.ts';

/** performance.now() of this process on the monotonic clock, in µs: V8 stamps profile samples with it. */
export function monotonicMicros(perfNow: number): number {
  const offset = Number(process.hrtime.bigint() / 1000n) - performance.now() * 1000;
  return perfNow * 1000 + offset;
}

/** Each sample's time and the busy µs it stands for (workerd samples only while the isolate runs). */
function busySamples(profile: Profile): { at: number; micros: number }[] {
  const sorted = [...profile.timeDeltas].sort((a, b) => a - b);
  const cap = 2 * (sorted[sorted.length >> 1] ?? 0);
  const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
  const out: { at: number; micros: number }[] = [];
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (!idle.has(id)) out.push({ at, micros: Math.min(delta, cap) });
  });
  return out;
}

/** Busy ms of the isolate in the whole profile. */
export function busyMs(profile: Profile): number {
  return busySamples(profile).reduce((sum, s) => sum + s.micros, 0) / 1000;
}

/**
 * Busy ms in each window [starts[i], starts[i + 1]), the last ending at `end` (all performance.now() ms
 * of this process). Null if the profile's clock does not line up with ours.
 */
export function busyPerWindow(profile: Profile, starts: number[], end: number): number[] | null {
  const edges = [...starts, end].map(monotonicMicros);
  // A profile on another clock would put every sample outside the windows.
  if (profile.startTime > (edges[0] as number) || profile.endTime < (edges[edges.length - 1] as number)) return null;
  const totals = new Array<number>(starts.length).fill(0);
  let window = 0;
  for (const sample of busySamples(profile)) {
    if (sample.at < (edges[0] as number)) continue;
    while (window < starts.length && sample.at >= (edges[window + 1] as number)) window++;
    if (window >= starts.length) break;
    totals[window] = (totals[window] as number) + sample.micros / 1000;
  }
  return totals;
}
