/**
 * The processes behind a `wrangler dev`, read from Linux's /proc: which workerd runs the worker, how
 * much CPU time a process tree used, and how much memory a process holds.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

/** Linux's USER_HZ, which /proc/PID/stat counts CPU time in. */
const CLOCK_TICKS = 100;

interface ProcessEntry {
  pid: number;
  name: string;
  /** User plus system CPU time so far. */
  cpuSeconds: number;
}

/** A process and its descendants, breadth first; the root is left out when it has ended. */
function processTree(rootPid: number): ProcessEntry[] {
  const children = new Map<number, number[]>();
  const entries = new Map<number, ProcessEntry>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // "pid (comm) state ppid … utime stime …": comm may hold spaces and parentheses, so read around the last ')'.
      const close = stat.lastIndexOf(')');
      const fields = stat.slice(close + 2).split(' ');
      const ppid = Number(fields[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
      entries.set(Number(entry), {
        pid: Number(entry),
        name: stat.slice(stat.indexOf('(') + 1, close),
        cpuSeconds: (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS,
      });
    } catch {
      // the process ended meanwhile
    }
  }
  const tree: ProcessEntry[] = [];
  const queue = [rootPid];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    const entry = entries.get(pid);
    if (entry) tree.push(entry);
    queue.push(...(children.get(pid) ?? []));
  }
  return tree;
}

/** CPU seconds used so far by a process and its descendants, by command name (or the name `names` gives a pid). */
export function treeCpu(rootPid: number, names: ReadonlyMap<number, string> = new Map()): Map<string, number> {
  const byName = new Map<string, number>();
  for (const entry of processTree(rootPid)) {
    const name = names.get(entry.pid) ?? entry.name;
    if (name) byName.set(name, (byName.get(name) ?? 0) + entry.cpuSeconds);
  }
  return byName;
}

/** The workerd processes under a wrangler process (its descendants). */
function workerdPids(rootPid: number): number[] {
  return processTree(rootPid)
    .filter((entry) => entry.pid !== rootPid && entry.name === 'workerd')
    .map((entry) => entry.pid);
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
