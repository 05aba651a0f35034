import type { Sql } from './client.ts';

/** The per-user daily chunk quota, in rows of `ingest_usage`. */
export function createQuotaRepo(sql: Sql) {
  return {
    /** Chunks the user's documents made today (UTC). */
    async usedToday(userId: string): Promise<number> {
      const [row] = await sql<{ used: number }[]>`
        select coalesce(sum(chunks), 0)::int as used from ingest_usage
         where user_id = ${userId} and day = (now() at time zone 'utc')::date`;
      return row?.used ?? 0;
    },

    /**
     * Grants up to `wanted` chunks of what is left of today's quota to one range of a job, and
     * returns how many. The user's rows are locked for the moment, so that two documents
     * extracted at once cannot both take the last of the quota; a redelivered range gets what it
     * was granted the first time.
     */
    async reserve(r: { userId: string; jobId: string; rangeStart: number; wanted: number; quota: number }): Promise<number> {
      // One round trip (supabase/migrations/20261123230754_quota_reserve_function.sql): the lock is
      // held only while the database itself works, never across the network.
      const [row] = await sql<{ granted: number }[]>`
        select public.reserve_ingest_chunks(${r.userId}, ${r.jobId}, ${r.rangeStart}, ${r.wanted}, ${r.quota}) as granted`;
      return row?.granted ?? 0;
    },
  };
}

export type QuotaRepo = ReturnType<typeof createQuotaRepo>;
