/**
 * CPU time of bench/load/load.ts's deployment over a phase, per process (the devstack's Node process, each
 * worker's wrangler and workerd processes) and, inside the devstack's process, per thread name, so
 * that work moved off its main thread still shows where it went.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { treeCpu, workerRuntimePid } from '../harness/processes.ts';

const CLOCK_TICKS = 100;
const BENCH = 'bench client + timing proxy';

/** CPU seconds of each thread of `pid`, summed by thread name (`node` is the main thread). */
function threadCpu(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return byName;
  }
  for (const tid of tasks) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const name = stat.slice(stat.indexOf('(') + 1, close);
      const fields = stat.slice(close + 2).split(' ');
      const seconds = (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
      byName.set(name, (byName.get(name) ?? 0) + seconds);
    } catch {
      // the thread ended meanwhile
    }
  }
  return byName;
}

export interface CpuShares {
  /** Per process (or devstack thread): CPU seconds used over the window divided by its wall seconds, in %. */
  percent: Record<string, number>;
  /** CPU seconds of the whole deployment (the devstack's process and the workers' processes) over the window. */
  deploymentSeconds: number;
}

/** Opens a window on the deployment's CPU time; the function it returns closes it. */
export function cpuWindow(devstackPid: number, wranglerPids: Record<string, number>) {
  const names = new Map<number, string>([[devstackPid, 'devstack (node)']]);
  for (const [worker, pid] of Object.entries(wranglerPids)) {
    names.set(pid, `${worker}: wrangler (node)`);
    const runtime = workerRuntimePid(pid);
    for (const workerd of runtime?.all ?? []) {
      names.set(workerd, workerd === runtime?.pid ? `${worker}: workerd` : `${worker}: workerd (proxy)`);
    }
  }
  const read = () => {
    const all = new Map<string, number>();
    for (const [name, seconds] of treeCpu(devstackPid, names)) all.set(name, seconds);
    for (const [name, seconds] of threadCpu(devstackPid)) all.set(`  devstack thread ${name}`, seconds);
    const own = process.cpuUsage();
    all.set(BENCH, (own.user + own.system) / 1e6);
    return all;
  };
  const before = read();
  const started = performance.now();
  return (): CpuShares => {
    const wallS = (performance.now() - started) / 1000;
    const percent: Record<string, number> = {};
    let deploymentSeconds = 0;
    for (const [name, seconds] of read()) {
      const used = seconds - (before.get(name) ?? 0);
      // Threads are already in their process's figure, and the bench's own process is not the deployment.
      if (!name.startsWith(' ') && name !== BENCH) deploymentSeconds += used;
      if (used >= 0.01 * wallS) percent[name] = (100 * used) / wallS;
    }
    return { percent, deploymentSeconds };
  };
}
