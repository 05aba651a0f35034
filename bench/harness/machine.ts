/** The machine a benchmark ran on, for its report. */
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';

export function machine() {
  return {
    /** Every CPU the kernel lists. */
    cpus: cpus().length,
    /** The CPUs this process may run on. */
    cores: availableParallelism(),
    cpu: cpus()[0]?.model ?? 'unknown',
    memGiB: totalmem() / 2 ** 30,
    node: process.version,
  };
}

/** The 1, 5 and 15 minute load averages, to two decimals. */
export const load = () => loadavg().map((n) => n.toFixed(2));

/** The same as numbers, for JSON. */
export const loadFigures = () => load().map(Number);
