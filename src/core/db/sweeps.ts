import type { Sql } from './client.ts';

/** What a sweep picked up: the row, and how often it has been picked up, this time included. */
export interface Swept {
  id: string;
  sweeps: number;
}

/**
 * The cron sweeps' SQL. Each claims stale rows and stamps them in one statement (skip locked), so
 * two overlapping sweeps never take the same row, and a row is not taken again before it is stale again.
 */
export function createSweepsDb(sql: Sql) {
  return {
    /** Jobs not finished and untouched for `minutes`: their messages were lost, or all their retries failed silently. */
    staleJobs(minutes: number, limit: number): Promise<(Swept & { extract_cursor: number; user_id: string })[]> {
      return sql<(Swept & { extract_cursor: number; user_id: string })[]>`
        update ingest_jobs set sweeps = sweeps + 1, updated_at = now()
         where id in (select id from ingest_jobs
                       where status in ('queued', 'processing') and updated_at < now() - make_interval(mins => ${minutes})
                       order by updated_at limit ${limit} for update skip locked)
        returning id, sweeps, extract_cursor, user_id`;
    },

    /**
     * Documents whose deletion began `minutes` ago and has not finished (a store failed part-way, and the
     * DELETE was not retried). Each is stamped again as it is taken, so a deletion that fails again waits as long.
     */
    unfinishedDocumentDeletions(
      minutes: number,
      limit: number,
    ): Promise<{ id: string; collection_id: string | null; user_id: string }[]> {
      return sql<{ id: string; collection_id: string | null; user_id: string }[]>`
        update documents set deleting_at = now()
         where id in (select id from documents where deleting_at < now() - make_interval(mins => ${minutes})
                       order by deleting_at limit ${limit} for update skip locked)
        returning id, collection_id, user_id`;
    },

    /** Collections whose deletion began `minutes` ago and has not finished, as for documents. */
    unfinishedCollectionDeletions(minutes: number, limit: number): Promise<{ id: string; user_id: string }[]> {
      return sql<{ id: string; user_id: string }[]>`
        update collections set deleting_at = now()
         where id in (select id from collections where deleting_at < now() - make_interval(mins => ${minutes})
                       order by deleting_at limit ${limit} for update skip locked)
        returning id, user_id`;
    },

    /** The last step of a collection's deletion; its documents, jobs and the rest go by cascade. */
    async deleteCollection(id: string): Promise<void> {
      await sql`delete from collections where id = ${id} and deleting_at is not null`;
    },

    /** Answers left unscored for `minutes` (their scoring was never queued, or its failure never recorded), up to a week back. */
    staleEvaluations(minutes: number, limit: number): Promise<Swept[]> {
      return sql<Swept[]>`
        update evaluations set sweeps = sweeps + 1
         where id in (select id from evaluations
                       where scored_at is null
                         and created_at < now() - make_interval(mins => ${minutes} * (sweeps + 1))
                         and created_at > now() - interval '7 days'
                       order by created_at limit ${limit} for update skip locked)
        returning id, sweeps`;
    },
  };
}

export type SweepsDb = ReturnType<typeof createSweepsDb>;
