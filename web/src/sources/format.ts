import { plural } from '../documents/format.ts';
import type { RunCounts, Schedule, Source, SourceRun } from './api.ts';

export const STATUS = {
  running: 'Syncing',
  succeeded: 'Synced',
  partial: 'Synced in part',
  failed: 'Failed',
  cancelled: 'Cancelled',
} satisfies Record<SourceRun['status'], string>;

/** What started a run. */
export const TRIGGER = {
  created: 'When added',
  manual: 'On demand',
  schedule: 'On schedule',
} satisfies Record<SourceRun['trigger'], string>;

export const SCHEDULES = [
  ['', 'Only when asked'],
  ['hourly', 'Every hour'],
  ['daily', 'Every day'],
  ['weekly', 'Every week'],
] as const satisfies readonly (readonly [NonNullable<Schedule> | '', string])[];

export const scheduleText = (schedule: Schedule) => SCHEDULES.find(([value]) => value === (schedule ?? ''))?.[1] ?? schedule;

/** A run's counts in the order a sync meets them, each with what it means. */
export const COUNTS = [
  ['found', 'Found', 'pages the crawl found within its limits'],
  ['fetched', 'Fetched', 'pages requested'],
  ['added', 'Added', 'new pages, each a new document'],
  ['changed', 'Changed', 'pages whose content changed: a new version of their document'],
  ['unchanged', 'Unchanged', 'pages not modified since the last sync'],
  ['failed', 'Failed', 'pages that could not be fetched or stored'],
  ['skipped', 'Skipped', 'pages robots.txt disallows'],
  ['gone', 'Gone', 'known pages this sync found gone'],
  ['removed', 'Removed', 'pages gone twice in a row: their documents were removed'],
] as const satisfies readonly (readonly [keyof RunCounts, string, string])[];

export const kindText = (kind: Source['kind']) => (kind === 'site' ? 'Site' : 'Single page');

export const pagesText = (count: number) => plural(count, 'page');

/** How long a run took, or has been running: "4 s", "2 min 5 s". */
export function durationText(run: SourceRun, now = Date.now()): string {
  const end = run.finished_at ? Date.parse(run.finished_at) : now;
  const seconds = Math.max(0, Math.round((end - Date.parse(run.started_at)) / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}
