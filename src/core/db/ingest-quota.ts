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
      return sql.begin(async (tx) => {
        await tx`select pg_advisory_xact_lock(hashtextextended(${`ingest_usage:${r.userId}`}, 0))`;
        const [earlier] = await tx<{ chunks: number }[]>`
          select chunks from ingest_usage where job_id = ${r.jobId} and range_start = ${r.rangeStart}`;
        if (earlier) return earlier.chunks;
        const [row] = await tx<{ used: number }[]>`
          select coalesce(sum(chunks), 0)::int as used from ingest_usage
           where user_id = ${r.userId} and day = (now() at time zone 'utc')::date`;
        const granted = Math.max(0, Math.min(r.wanted, r.quota - (row?.used ?? 0)));
        await tx`
          insert into ingest_usage (job_id, range_start, user_id, chunks)
          values (${r.jobId}, ${r.rangeStart}, ${r.userId}, ${granted})`;
        return granted;
      });
    },
  };
}

export type QuotaRepo = ReturnType<typeof createQuotaRepo>;
