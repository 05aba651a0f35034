import { call, rag, type Schema } from '../api.ts';

export type Usage = Schema<'Usage'>;
export type UsageRow = Schema<'UsageRow'>;
export type GroupBy = Schema<'UsageGroupBy'>;

export interface UsageWindow {
  since: string;
  until: string;
}

export const usageKey = (window: UsageWindow, groupBy: GroupBy) => ['usage', window.since, window.until, groupBy];

/** GET /usage: the caller's own usage, or, for an administrator, everyone's. */
export const readUsage = ({ since, until }: UsageWindow, groupBy: GroupBy) =>
  call(rag.GET('/usage', { params: { query: { since, until, group_by: groupBy } } }));

/** One day's tokens, the groups added up: what the chart draws. */
export interface DayTotal {
  date: string;
  input: number;
  output: number;
  calls: number;
}

/** Each day of `days`, with what `rows` spent on it (nothing on a day without rows). */
export function perDay(rows: UsageRow[], days: string[]): DayTotal[] {
  const byDay = new Map(days.map((date) => [date, { date, input: 0, output: 0, calls: 0 }]));
  for (const row of rows) {
    const day = byDay.get(row.date);
    if (!day) continue;
    day.input += row.input_tokens;
    day.output += row.output_tokens;
    day.calls += row.calls;
  }
  return [...byDay.values()];
}

/** One group's figures over the whole window. */
export interface GroupTotal {
  group: string | null;
  calls: number;
  input: number;
  output: number;
  /** Null when a model of the group has no price (or there is no price table). */
  cost: number | null;
}

/** The rows added up per group, the most tokens first. */
export function perGroup(rows: UsageRow[]): GroupTotal[] {
  const byGroup = new Map<string | null, GroupTotal>();
  for (const row of rows) {
    let total = byGroup.get(row.group);
    if (!total) {
      total = { group: row.group, calls: 0, input: 0, output: 0, cost: 0 };
      byGroup.set(row.group, total);
    }
    total.calls += row.calls;
    total.input += row.input_tokens;
    total.output += row.output_tokens;
    total.cost = total.cost === null || row.cost_usd === null ? null : total.cost + row.cost_usd;
  }
  return [...byGroup.values()].sort((a, b) => b.input + b.output - (a.input + a.output));
}
