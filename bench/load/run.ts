/**
 * One run of bench/load/load.ts against one checkout: its deployment started, a user and a collection, a
 * warm-up, the uploads, then the query streams, each phase with the deployment's CPU time and, when
 * asked, a CPU profile of the devstack's main thread.
 */
import { join } from 'node:path';
import { signUpUser } from '../../devstack/harness/auth-client.ts';
import { formatProfile, type ProfileSummary, readProfile } from '../harness/cpu-profile.ts';
import { inspectorPort, workerProfiler } from '../harness/inspector.ts';
import { pubmedCorpus } from '../harness/query-stack.ts';
import { createCollection } from '../harness/stack.ts';
import { percentile } from '../harness/stats.ts';
import type { ModelCall } from '../harness/timing-proxies.ts';
import type { EventLoopLag } from './child.ts';
import { type CpuShares, cpuWindow } from './cpu.ts';
import { type QueryResult, runQueries, warmUpQueries } from './queries.ts';
import { startLoadStack } from './stack.ts';
import { type Pace, runUploads, type UploadResult } from './uploads.ts';

export interface RunPlan {
  label: string;
  root: string;
  round: number;
  /** The burst: this many uploads by this many clients at once. */
  uploads: number;
  uploadConcurrency: number;
  /** Then uploads started at a steady rate (none: no steady phase). */
  steadyUploads: number;
  steadyRate: number;
  streams: number;
  queries: number;
  queryWarmUp: number;
  databaseUrl?: string;
  embeddingModel: string;
  tokenDelayMs: number;
  directDatabase: boolean;
  traceUpstreams: boolean;
  /** Write a .cpuprofile per phase here. */
  profileDir?: string;
  log: (line: string) => void;
}

export interface RunResult {
  label: string;
  root: string;
  round: number;
  embeddings: string;
  startS: number;
  uploads: UploadPhase;
  steady: UploadPhase | null;
  queries: (QueryResult & { cpu: CpuShares; lag: EventLoopLag; profile?: ProfileSummary }) | null;
}

const WARM_UP_FILES = 5;

export type UpstreamTimes = Record<string, { calls: number; p50: number; p99: number }>;

type UploadPhase = UploadResult & { upstreams: UpstreamTimes; cpu: CpuShares; lag: EventLoopLag; profile?: ProfileSummary };

/** The API worker's calls to the devstack in [from, to], by method and service path, as the timing proxy saw them. */
function upstreamTimes(calls: ModelCall[], from: number, to: number): UpstreamTimes {
  const groups = new Map<string, number[]>();
  for (const call of calls) {
    if (call.start < from || call.end > to) continue;
    const name = `${call.method} ${call.path.split('?')[0]?.split('/').slice(0, 4).join('/')}`;
    groups.set(name, [...(groups.get(name) ?? []), call.end - call.start]);
  }
  return Object.fromEntries(
    [...groups].map(([name, times]) => [name, { calls: times.length, p50: percentile(times, 50), p99: percentile(times, 99) }]),
  );
}

/** Profilers for the workers whose inspector can be found; a worker without one is left out, with a note. */
async function workerProfilers(wranglerPids: Record<string, number>) {
  const found: { name: string; profiler: Awaited<ReturnType<typeof workerProfiler>> }[] = [];
  for (const [name, pid] of Object.entries(wranglerPids)) {
    const port = inspectorPort(pid);
    if (port) found.push({ name, profiler: await workerProfiler(port) });
  }
  return found;
}

export async function runOnce(plan: RunPlan): Promise<RunResult> {
  const uploaded = plan.uploads + plan.steadyUploads;
  const corpus = pubmedCorpus(Math.max(uploaded, plan.streams) + WARM_UP_FILES);
  const burstFiles = corpus.files.slice(0, plan.uploads);
  const steadyFiles = corpus.files.slice(plan.uploads, uploaded);
  const warmUpFiles = corpus.files.slice(-WARM_UP_FILES);
  // Questions about the documents uploaded first, each client its own.
  const questions = corpus.questions.slice(0, Math.max(uploaded, plan.streams));
  const started = performance.now();
  const stack = await startLoadStack({
    root: plan.root,
    databaseUrl: plan.databaseUrl,
    embeddingModel: plan.embeddingModel,
    tokenDelayMs: plan.tokenDelayMs,
    directDatabase: plan.directDatabase,
    traceUpstreams: plan.traceUpstreams,
  });
  try {
    const startS = (performance.now() - started) / 1000;
    plan.log(`[${plan.label} #${plan.round}] deployment up in ${startS.toFixed(1)} s; embeddings: ${stack.embeddings}`);
    const { token } = await signUpUser(stack, `load-${crypto.randomUUID().slice(0, 8)}@example.com`);
    const target = { apiUrl: stack.apiUrl, databaseUrl: stack.databaseUrl, token };
    const warm = await runUploads({ ...target, collectionId: await createCollection(stack, token, 'warm-up') }, warmUpFiles, {
      concurrency: 1,
    });
    if (warm.errors > 0) throw new Error(`warm-up uploads failed: ${warm.errorExamples.join('; ')}`);
    const collectionId = await createCollection(stack, token, 'load');

    const profiled = async <T>(phase: string, work: () => Promise<T>) => {
      const file = (who: string) =>
        plan.profileDir ? join(plan.profileDir, `${plan.label}-${plan.round}-${phase}-${who}.cpuprofile`) : '';
      const workers = plan.profileDir ? await workerProfilers(stack.wranglerPids) : [];
      if (plan.profileDir) await stack.profileStart();
      for (const worker of workers) await worker.profiler.start();
      await stack.lagReset();
      const cpu = cpuWindow(stack.pid, stack.wranglerPids);
      const result = await work();
      const shares = cpu();
      const lag = await stack.lagRead();
      let profile: ProfileSummary | undefined;
      if (plan.profileDir) {
        await stack.profileStop(file('devstack'));
        profile = readProfile(file('devstack'));
        plan.log(`${formatProfile(`${plan.label} #${plan.round} ${phase}: devstack (${file('devstack')})`, profile)}\n`);
        for (const { name, profiler } of workers) {
          const stopped = await profiler.stop(file(name)).then(
            () => true,
            (error: unknown) => plan.log(`no profile of the ${name} worker: ${error instanceof Error ? error.message : error}`),
          );
          if (!stopped) continue;
          plan.log(
            `${formatProfile(`${plan.label} #${plan.round} ${phase}: ${name} worker (${file(name)})`, readProfile(file(name)))}\n`,
          );
        }
      }
      return { ...result, cpu: shares, lag, ...(profile ? { profile } : {}) };
    };

    const uploadPhase = (phase: string, files: typeof burstFiles, pace: Pace) =>
      profiled(phase, async () => {
        const from = performance.now();
        const result = await runUploads({ ...target, collectionId }, files, pace);
        const phaseResult = { ...result, upstreams: upstreamTimes(stack.upstream.calls, from, performance.now()) };
        plan.log(
          `[${plan.label} #${plan.round}] ${phase}: acceptance p50 ${result.acceptanceMs.p50.toFixed(0)} ms, ` +
            `${result.docsPerS.toFixed(1)} docs/s, ${result.errors} errors; jobs ${JSON.stringify(result.statuses)}` +
            (plan.traceUpstreams
              ? `; the API worker's upstream calls (ms, p50/p99): ${Object.entries(phaseResult.upstreams)
                  .map(([name, t]) => `${name} ×${t.calls} ${t.p50.toFixed(0)}/${t.p99.toFixed(0)}`)
                  .join('; ')}`
              : ''),
        );
        return phaseResult;
      });
    const uploads = await uploadPhase('uploads', burstFiles, { concurrency: plan.uploadConcurrency });
    const steady = steadyFiles.length > 0 ? await uploadPhase('steady', steadyFiles, { perSecond: plan.steadyRate }) : null;
    const queryTarget = { ...target, collectionId, model: stack.upstream };
    if (plan.streams > 0) await warmUpQueries(queryTarget, questions, plan.queryWarmUp);
    const queries =
      plan.streams > 0 ? await profiled('queries', () => runQueries(queryTarget, questions, plan.streams, plan.queries)) : null;
    if (queries)
      plan.log(`[${plan.label} #${plan.round}] queries: ttft p50 ${queries.ttftMs.p50.toFixed(0)} ms, ${queries.errors} errors`);
    return {
      label: plan.label,
      root: plan.root,
      round: plan.round,
      embeddings: stack.embeddings,
      startS,
      uploads,
      steady,
      queries,
    };
  } finally {
    await stack.stop();
  }
}
