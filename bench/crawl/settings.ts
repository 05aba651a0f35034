/** bench/crawl/crawl.ts's command line and targets, and the API types its parts share. */
import type { Schema } from '../../devstack/harness/api-call.ts';
import { oneOf, readFlags, text, toggle, whole } from '../harness/flags.ts';

export const flags = readFlags({
  pages: whole('200', 20, 1000),
  runs: whole('3', 1, 20),
  'operator-run': oneOf('if-missed', ['if-missed', 'always', 'never'] as const),
  'operator-delay': whole('0', 0, 10_000),
  'poll-ms': whole('100', 10, 5_000),
  out: text(),
  append: toggle(),
});
export const PAGES = flags.pages;
export const CHANGED = 10;
export const GONE = 5;
export const TARGET_CRAWL_RATIO = 1.1;
export const TARGET_SYNC_SHARE = 0.1;
export const TIMEOUT_MS = 900_000;

export type Source = Schema<'WebSource'>;
export type Run = Schema<'WebSourceRun'>;
export type Counts = Run['counts'];
