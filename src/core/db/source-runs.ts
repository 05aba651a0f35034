import { MAX_RUN_ERRORS } from '../sources/limits.ts';
import { isUniqueViolation, type Sql } from './client.ts';

export const RUN_TRIGGERS = ['created', 'manual', 'schedule'] as const;
export type RunTrigger = (typeof RUN_TRIGGERS)[number];
export const RUN_STATUSES = ['running', 'succeeded', 'partial', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const RUN_COUNTS = ['found', 'fetched', 'added', 'changed', 'unchanged', 'failed', 'skipped', 'gone', 'removed'] as const;
export type RunCounts = Record<(typeof RUN_COUNTS)[number], number>;

export interface RunError {
  url: string;
  message: string;
}

export interface RunRow extends RunCounts {
  id: string;
  source_id: string;
  trigger: RunTrigger;
  status: RunStatus;
  errors: RunError[];
  message: string | null;
  robots: Record<string, string | null>;
  step: number;
  /** The API key that started it, which the jobs of its pages carry; null for a bearer token or a schedule. */
  api_key_id: string | null;
  started_at: string;
  finished_at: string | null;
  updated_at: string;
}

export function createRunRepo(sql: Sql) {
  return {
    /**
     * A new run with its seed page as the frontier; undefined while another run of the source is
     * still going (one at a time, by the unique index).
     */
    async start(
      source: { id: string; url: string },
      seed: string,
      trigger: RunTrigger,
      apiKeyId: string | null,
    ): Promise<RunRow | undefined> {
      try {
        const [run] = await sql<RunRow[]>`
          with run as (
            insert into source_runs (source_id, trigger, api_key_id) values (${source.id}, ${trigger}, ${apiKeyId}) returning *
          ),
          seeded as (
            insert into source_pages (source_id, url, href, depth, run_id, state)
            select ${source.id}, ${seed}, ${source.url}, 0, run.id, 'pending' from run
            on conflict (source_id, url) do update
               set run_id = excluded.run_id, state = 'pending', depth = 0, href = excluded.href
          )
          select * from run`;
        return run;
      } catch (error) {
        if (isUniqueViolation(error, 'source_runs_running_idx')) return undefined;
        throw error;
      }
    },

    async find(id: string): Promise<RunRow | undefined> {
      const [row] = await sql<RunRow[]>`select * from source_runs where id = ${id}`;
      return row;
    },

    list(sourceId: string, page: { limit: number; offset: number }): Promise<RunRow[]> {
      return sql<RunRow[]>`
        select * from source_runs where source_id = ${sourceId}
         order by started_at desc, id limit ${page.limit} offset ${page.offset}`;
    },

    /** Each source's latest run. */
    async latest(sourceIds: string[]): Promise<Map<string, RunRow>> {
      if (sourceIds.length === 0) return new Map();
      const rows = await sql<RunRow[]>`
        select distinct on (source_id) * from source_runs where source_id in (select value::uuid from jsonb_array_elements_text(${sql.json(sourceIds)}))
         order by source_id, started_at desc, id`;
      return new Map(rows.map((row) => [row.source_id, row]));
    },

    /** Moves a running run from `step` to the next; false when that step already ran (a redelivery) or the run has ended. */
    async advance(id: string, step: number): Promise<boolean> {
      const rows = await sql`
        update source_runs set step = step + 1, updated_at = now()
         where id = ${id} and step = ${step} and status = 'running' returning id`;
      return rows.length > 0;
    },

    async setRobots(id: string, origin: string, text: string | null): Promise<void> {
      await sql`
        update source_runs set robots = robots || jsonb_build_object(${origin}::text, ${text}::text) where id = ${id}`;
    },

    /**
     * Ends a running run with its counts and errors (which its pages' rows no longer hold once another run
     * goes), and records, in the same statement, a `source.synced` delivery for every active webhook of the
     * source's owner that asked for it: the ending is never lost between the run's row and the queue.
     */
    async finish(
      id: string,
      ending: { status: Exclude<RunStatus, 'running'>; message: string | null; counts?: RunCounts; errors?: RunError[] },
    ): Promise<{ ended: boolean; deliveries: string[] }> {
      const counts = ending.counts ?? (Object.fromEntries(RUN_COUNTS.map((name) => [name, 0])) as RunCounts);
      const [row] = await sql<{ ended: number; deliveries: string[] }[]>`
        with ended as (
          update source_runs set status = ${ending.status}, message = ${ending.message}, ${sql(counts)},
                 errors = ${sql.json((ending.errors ?? []).slice(0, MAX_RUN_ERRORS) as never)},
                 finished_at = now(), updated_at = now()
           where id = ${id} and status = 'running'
          returning *
        ), deliveries as (
          insert into webhook_deliveries (webhook_id, job_id, event, payload)
          select w.id, e.id, 'source.synced',
                 jsonb_build_object(
                   'event', 'source.synced', 'run_id', e.id, 'source_id', s.id, 'collection_id', s.collection_id,
                   'source', s.url, 'status', e.status, 'message', e.message,
                   'counts', jsonb_build_object(${sql.unsafe(RUN_COUNTS.map((name) => `'${name}', e.${name}`).join(', '))}),
                   'occurred_at', to_char(e.finished_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text
            from ended e
            join sources s on s.id = e.source_id
            join webhooks w on w.user_id = s.user_id and w.active
                           and (w.collection_id is null or w.collection_id = s.collection_id)
                           and w.events ? 'source.synced'
          returning id
        )
        select (select count(*)::int from ended) as ended,
               coalesce((select jsonb_agg(id) from deliveries), '[]'::jsonb) as deliveries`;
      return { ended: (row?.ended ?? 0) > 0, deliveries: row?.deliveries ?? [] };
    },

    /** Runs whose steps were all lost (no step moved them for `minutes`): the cron queues their step again. */
    stale(minutes: number, limit: number): Promise<RunRow[]> {
      return sql<RunRow[]>`
        select * from source_runs where status = 'running' and updated_at < now() - ${`${minutes} minutes`}::interval
         order by updated_at limit ${limit}`;
    },

    async touch(id: string): Promise<void> {
      await sql`update source_runs set updated_at = now() where id = ${id}`;
    },
  };
}

export type RunRepo = ReturnType<typeof createRunRepo>;
