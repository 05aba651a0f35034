import type { Sql } from './client.ts';
import type { JobStatus } from './jobs.ts';

/** Every user's jobs of one kind: `stuck` (unfinished and untouched a while) or `failed`. */
export type JobState = 'stuck' | 'failed';

export interface AdminCounts {
  users: number;
  collections: number;
  documents: number;
  queued: number;
  processing: number;
  stuck: number;
  failed_last_24h: number;
}

export interface AdminUserRow {
  id: string;
  email: string | null;
  created_at: string;
  last_sign_in_at: string | null;
  is_admin: boolean;
  collections: number;
  documents: number;
  calls: number;
  input_tokens: number;
  output_tokens: number;
  /** The window's tokens per model, which the service prices. */
  models: { model: string; input_tokens: number; output_tokens: number }[];
}

export interface AdminJobRow {
  job_id: string;
  user_id: string;
  user_email: string | null;
  collection_id: string | null;
  collection_name: string | null;
  document_id: string | null;
  source: string;
  status: JobStatus;
  error_message: string | null;
  chunks_processed: number;
  chunks_total: number;
  created_at: string;
  updated_at: string;
}

/** The admin page's SQL: every user's rows, read across tenants, which no other repository does. */
export function createAdminRepo(sql: Sql) {
  const stuckClause = (minutes: number) =>
    sql`j.status in ('queued', 'processing') and j.updated_at < now() - make_interval(mins => ${minutes})`;

  return {
    async counts(stuckAfterMinutes: number): Promise<AdminCounts> {
      const [row] = await sql<AdminCounts[]>`
        select (select count(*) from auth.users)::int as users,
               (select count(*) from collections where deleting_at is null)::int as collections,
               (select count(*) from documents where deleting_at is null)::int as documents,
               count(*) filter (where j.status = 'queued')::int as queued,
               count(*) filter (where j.status = 'processing')::int as processing,
               count(*) filter (where ${stuckClause(stuckAfterMinutes)})::int as stuck,
               count(*) filter (where j.status = 'failed' and j.updated_at > now() - interval '1 day')::int as failed_last_24h
          from ingest_jobs j`;
      return row as AdminCounts;
    },

    /** Users with their collections, documents and the window's usage; most tokens first, then newest. */
    users(window: { since: string; until: string }, page: { limit: number; offset: number }): Promise<AdminUserRow[]> {
      return sql<AdminUserRow[]>`
        with spent as (
          select user_id, model, sum(calls)::int as calls, sum(input_tokens)::bigint::float8 as input_tokens,
                 sum(output_tokens)::bigint::float8 as output_tokens
            from usage_events where day between ${window.since}::date and ${window.until}::date
           group by user_id, model),
        per_user as (
          select user_id, sum(calls)::int as calls, sum(input_tokens)::float8 as input_tokens,
                 sum(output_tokens)::float8 as output_tokens,
                 jsonb_agg(jsonb_build_object('model', model, 'input_tokens', input_tokens, 'output_tokens', output_tokens))
                   as models
            from spent group by user_id)
        select u.id, u.email, u.created_at, u.last_sign_in_at,
               (u.raw_app_meta_data -> 'is_admin') is not distinct from 'true'::jsonb as is_admin,
               (select count(*) from collections c where c.user_id = u.id and c.deleting_at is null)::int as collections,
               (select count(*) from documents d where d.user_id = u.id and d.deleting_at is null)::int as documents,
               coalesce(p.calls, 0) as calls, coalesce(p.input_tokens, 0) as input_tokens,
               coalesce(p.output_tokens, 0) as output_tokens, coalesce(p.models, '[]'::jsonb) as models
          from auth.users u left join per_user p on p.user_id = u.id
         order by coalesce(p.input_tokens + p.output_tokens, 0) desc, u.created_at desc, u.id
         limit ${page.limit} offset ${page.offset}`;
    },

    /** Stuck: unfinished and untouched for `stuckAfterMinutes`, oldest first; failed: newest first. */
    jobs(state: JobState, stuckAfterMinutes: number, page: { limit: number; offset: number }): Promise<AdminJobRow[]> {
      return sql<AdminJobRow[]>`
        select j.id as job_id, j.user_id, u.email as user_email, j.collection_id, c.name as collection_name,
               j.document_id, j.source, j.status, j.error_message, j.chunks_processed, j.chunks_total, j.created_at,
               j.updated_at
          from ingest_jobs j
          left join auth.users u on u.id = j.user_id
          left join collections c on c.id = j.collection_id
         where ${state === 'stuck' ? stuckClause(stuckAfterMinutes) : sql`j.status = 'failed'`}
         order by ${state === 'stuck' ? sql`j.updated_at asc` : sql`j.updated_at desc`}, j.id
         limit ${page.limit} offset ${page.offset}`;
    },

    job(id: string): Promise<AdminJobRow | undefined> {
      return sql<AdminJobRow[]>`
        select j.id as job_id, j.user_id, null::text as user_email, j.collection_id, null::text as collection_name,
               j.document_id, j.source, j.status, j.error_message, j.chunks_processed, j.chunks_total, j.created_at,
               j.updated_at
          from ingest_jobs j where j.id = ${id}`.then((rows) => rows[0]);
    },

    /**
     * Claims a stuck job for a retry, as the cron sweep would later: stamped (so neither the sweep nor a second
     * click takes it again at once) and its sweep count reset. Undefined: it is no longer stuck.
     */
    async claimStuck(id: string, stuckAfterMinutes: number): Promise<{ extract_cursor: number; user_id: string } | undefined> {
      const [row] = await sql<{ extract_cursor: number; user_id: string }[]>`
        update ingest_jobs j set sweeps = 0, updated_at = now()
         where j.id = ${id} and ${stuckClause(stuckAfterMinutes)}
        returning j.extract_cursor, j.user_id`;
      return row;
    },
  };
}

export type AdminRepo = ReturnType<typeof createAdminRepo>;
