/** Printing the benchmarks' figures. */

export const log = (line = '') => console.log(line);

export const MB = 1e6;
const MiB = 2 ** 20;

/** `n` to `digits` decimals. */
export const fixed = (n: number, digits = 1) => n.toFixed(digits);

/** Bytes as MiB, to one decimal. */
export const mib = (bytes: number) => fixed(bytes / MiB);
