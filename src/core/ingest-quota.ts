/** The per-user daily ingestion quota: when it resets, and how it is explained to users. */

/** Seconds until the next 00:00 UTC, when a day's quota starts afresh (at least 1). */
export function secondsUntilQuotaResets(now: Date = new Date()): number {
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((midnight - now.getTime()) / 1000));
}

const count = (n: number) => n.toLocaleString('en-US');

/** Why an upload or URL was refused (429). */
export const quotaRefusal = (perDay: number) =>
  `Your daily ingestion quota of ${count(perDay)} chunks is used up; it resets at 00:00 UTC`;

/** Why a document ended `partial` (some chunks kept) or `failed` (none). */
export const quotaWarning = (perDay: number, kept: number) =>
  kept > 0
    ? `Your daily ingestion quota of ${count(perDay)} chunks was reached; only the first ${count(kept)} chunks of this document were kept`
    : `Your daily ingestion quota of ${count(perDay)} chunks was reached before this document could be read; it resets at 00:00 UTC`;
