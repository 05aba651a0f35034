// Figures and UTC days as the usage and admin pages write them.

const whole = new Intl.NumberFormat('en-US');
const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });
const dollars = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumFractionDigits: 2 });
const cents = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumSignificantDigits: 2 });

/** 1234567 → "1,234,567". */
export const count = (n: number) => whole.format(n);

/** 1234567 → "1.2M": an axis label. */
export const compactCount = (n: number) => compact.format(n);

/** USD: to the cent, or, under a cent, to two significant digits (a question's cost is a fraction of one). */
export const usd = (n: number) => (n > 0 && n < 0.01 ? cents.format(n) : dollars.format(n));

const DAY_MS = 86_400_000;

export const todayUtc = (now = Date.now()) => new Date(now).toISOString().slice(0, 10);

const addDays = (day: string, days: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

/** The last `days` UTC days, today included, as GET /usage and GET /admin/users take them. */
export function lastDays(days: number, now = Date.now()): { since: string; until: string } {
  const until = todayUtc(now);
  return { since: addDays(until, -(days - 1)), until };
}

/** Every UTC day from `since` to `until`, both included. */
export function daysBetween(since: string, until: string): string[] {
  const days: string[] = [];
  for (let day = since; day <= until; day = addDays(day, 1)) days.push(day);
  return days;
}

/** The window choices of both pages. */
export const WINDOWS = [7, 30, 90] as const;
export type WindowDays = (typeof WINDOWS)[number];

/** An id the reader cannot put a name to, short enough for a table: its first eight characters. */
export const shortId = (id: string) => id.slice(0, 8);
