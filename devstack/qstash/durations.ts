const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * QStash durations as in Upstash-Delay and Upstash-Timeout: a number and a unit
 * (`10s`, `2m`, `1h`, `1d`), parts may be chained (`1h30m`). A bare number means
 * seconds, which is what Upstash-Timeout accepted before units. Returns undefined
 * for anything else, so the caller can name the header in its error.
 */
export function parseDuration(text: string): number | undefined {
  const value = text.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  if (!/^(\d+(\.\d+)?(ms|s|m|h|d))+$/.test(value)) return undefined;
  let total = 0;
  for (const [, amount, unit] of value.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)) {
    total += Number(amount) * (UNIT_MS[unit ?? ''] ?? Number.NaN);
  }
  return Number.isFinite(total) ? Math.round(total) : undefined;
}
