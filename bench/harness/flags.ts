/**
 * The benchmarks' command lines: each flag declared with its default and how its text becomes a value,
 * so that a bench reads checked values in one call. A bad flag or value ends the run with a message
 * (exit code 2), not a stack trace.
 */
import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';

export interface Flag<T> {
  type: 'string' | 'boolean';
  default?: string | boolean;
  read(value: string | boolean | undefined, name: string): T;
}

type Values<S> = { [K in keyof S]: S[K] extends Flag<infer T> ? T : never };

export function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

export function readFlags<S extends Record<string, Flag<unknown>>>(spec: S): Values<S> {
  const options: ParseArgsOptionsConfig = {};
  for (const [name, flag] of Object.entries(spec)) {
    options[name] = flag.default === undefined ? { type: flag.type } : { type: flag.type, default: flag.default };
  }
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ options }) as { values: typeof values });
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
  return Object.fromEntries(Object.entries(spec).map(([name, flag]) => [name, flag.read(values[name], name)])) as Values<S>;
}

/** An on/off switch, off unless given. */
export const toggle = (): Flag<boolean> => ({ type: 'boolean', default: false, read: (value) => value === true });

export function text(): Flag<string | undefined>;
export function text(fallback: string): Flag<string>;
export function text(fallback?: string): Flag<string | undefined> {
  return { type: 'string', default: fallback, read: (value) => value as string | undefined };
}

/** Any number JavaScript reads. */
export const decimal = (fallback: string): Flag<number> => ({
  type: 'string',
  default: fallback,
  read: (value, name) => {
    const number = Number(value);
    return Number.isFinite(number) ? number : fail(`--${name} must be a number`);
  },
});

/** A whole number from `min` to `max`; without a default, absent unless given. */
export function whole(fallback: string, min?: number, max?: number): Flag<number>;
export function whole(fallback: undefined, min?: number, max?: number): Flag<number | undefined>;
export function whole(fallback: string | undefined, min = 0, max = Number.MAX_SAFE_INTEGER): Flag<number | undefined> {
  return {
    type: 'string',
    default: fallback,
    read: (value, name) => {
      if (value === undefined) return undefined;
      const number = Number(value);
      if (Number.isInteger(number) && number >= min && number <= max) return number;
      return fail(`--${name} must be a whole number ${max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `${min}–${max}`}`);
    },
  };
}

/** Comma-separated whole numbers, each at least `min`. */
export const wholeNumbers = (fallback: string, min = 0): Flag<number[]> => ({
  type: 'string',
  default: fallback,
  read: (value, name) => {
    const numbers = String(value)
      .split(',')
      .map((part) => Number(part.trim()));
    if (numbers.every((n) => Number.isInteger(n) && n >= min)) return numbers;
    return fail(`--${name}: whole numbers of at least ${min}, comma-separated`);
  },
});

/** One of the `allowed` names. */
export const oneOf = <const T extends string>(fallback: T, allowed: readonly T[]): Flag<T> => ({
  type: 'string',
  default: fallback,
  read: (value, name) => (allowed.includes(value as T) ? (value as T) : fail(`--${name}: ${allowed.join(' or ')}`)),
});

/** Comma-separated names from `allowed`, each kept once. */
export const someOf = <const T extends string>(fallback: string, allowed: readonly T[]): Flag<T[]> => ({
  type: 'string',
  default: fallback,
  read: (value, name) => {
    const items = String(value)
      .split(',')
      .map((item) => item.trim());
    const bad = items.filter((item) => !allowed.includes(item as T));
    if (bad.length > 0) fail(`--${name}: ${bad.join(', ')} not one of ${allowed.join(', ')}`);
    return [...new Set(items)] as T[];
  },
});
