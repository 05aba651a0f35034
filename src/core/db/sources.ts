import type { Sql } from './client.ts';

export const SOURCE_KINDS = ['site', 'url'] as const;
export type SourceKind = (typeof SOURCE_KINDS)[number];
export const SOURCE_SCHEDULES = ['hourly', 'daily', 'weekly'] as const;
export type SourceSchedule = (typeof SOURCE_SCHEDULES)[number];

export interface SourceRow {
  id: string;
  /** Who added it: its documents are theirs. */
  user_id: string;
  collection_id: string | null;
  kind: SourceKind;
  url: string;
  sitemap_url: string | null;
  max_pages: number;
  max_depth: number;
  include_patterns: string[];
  exclude_patterns: string[];
  allowed_origins: string[];
  metadata: Record<string, string | number | boolean | string[]>;
  schedule: SourceSchedule | null;
  paused: boolean;
  next_sync_at: string | null;
  created_at: string;
  updated_at: string;
}

export type NewSource = Pick<
  SourceRow,
  | 'user_id'
  | 'collection_id'
  | 'kind'
  | 'url'
  | 'sitemap_url'
  | 'max_pages'
  | 'max_depth'
  | 'include_patterns'
  | 'exclude_patterns'
  | 'allowed_origins'
  | 'metadata'
  | 'schedule'
>;

export type SourceChanges = Partial<
  Pick<
    SourceRow,
    | 'sitemap_url'
    | 'max_pages'
    | 'max_depth'
    | 'include_patterns'
    | 'exclude_patterns'
    | 'allowed_origins'
    | 'schedule'
    | 'paused'
  >
>;

const JSON_COLUMNS = ['include_patterns', 'exclude_patterns', 'allowed_origins', 'metadata'] as const;

/** A schedule's next sync, counted from now in the database's clock. */
const nextSync = (sql: Sql, schedule: SourceSchedule | null | undefined) =>
  schedule ? sql`now() + ${`1 ${schedule === 'hourly' ? 'hour' : schedule === 'daily' ? 'day' : 'week'}`}::interval` : sql`null`;

export function createSourceRepo(sql: Sql) {
  const asJson = <T extends Record<string, unknown>>(row: T) => {
    const out: Record<string, unknown> = { ...row };
    for (const column of JSON_COLUMNS) if (column in out) out[column] = sql.json(out[column] as never);
    return out;
  };

  return {
    async insert(source: NewSource): Promise<SourceRow> {
      const [row] = await sql<SourceRow[]>`
        insert into sources ${sql(asJson(source))} returning *`;
      const [scheduled] = await sql<SourceRow[]>`
        update sources set next_sync_at = ${nextSync(sql, source.schedule)} where id = ${(row as SourceRow).id} returning *`;
      return scheduled as SourceRow;
    },

    async find(id: string): Promise<SourceRow | undefined> {
      const [row] = await sql<SourceRow[]>`select * from sources where id = ${id}`;
      return row;
    },

    /** A collection's sources, or (collectionId null) a user's personal ones; newest first. */
    list(place: { collectionId: string } | { userId: string }): Promise<SourceRow[]> {
      return 'collectionId' in place
        ? sql<SourceRow[]>`select * from sources where collection_id = ${place.collectionId} order by created_at desc, id`
        : sql<SourceRow[]>`
            select * from sources where collection_id is null and user_id = ${place.userId} order by created_at desc, id`;
    },

    /** Every source the user may manage: their personal ones, and those of collections they own or may ingest into. */
    listManaged(userId: string): Promise<SourceRow[]> {
      return sql<SourceRow[]>`
        select s.* from sources s
          left join collections c on c.id = s.collection_id and c.deleting_at is null
          left join collection_members m on m.collection_id = c.id and m.user_id = ${userId}
         where (s.collection_id is null and s.user_id = ${userId})
            or c.user_id = ${userId} or m.permission = 'ingest'
         order by s.created_at desc, s.id`;
    },

    /** A changed schedule (or pause) counts the next sync from now. */
    async update(id: string, changes: SourceChanges): Promise<SourceRow | undefined> {
      const fields = asJson(changes);
      const rescheduled = 'schedule' in changes || 'paused' in changes;
      const [row] = await sql<SourceRow[]>`
        update sources set ${sql({ ...fields, updated_at: sql`now()` } as never)} where id = ${id} returning *`;
      if (!row || !rescheduled) return row;
      const [scheduled] = await sql<SourceRow[]>`
        update sources set next_sync_at = ${row.paused ? sql`null` : nextSync(sql, row.schedule)}
         where id = ${id} returning *`;
      return scheduled;
    },

    /** Its documents are marked as being deleted (no longer listed or searched) in the same statement. */
    async delete(id: string): Promise<{ id: string; collection_id: string | null; user_id: string }[]> {
      return sql<{ id: string; collection_id: string | null; user_id: string }[]>`
        with marked as (
          update documents set deleting_at = coalesce(deleting_at, now())
           where source_id = ${id} returning id, collection_id, user_id
        ), gone as (delete from sources where id = ${id})
        select * from marked`;
    },

    /** Claims the sources whose scheduled sync is due, moving each one's next sync on a period. */
    async claimDue(limit: number): Promise<SourceRow[]> {
      return sql<SourceRow[]>`
        update sources s
           set next_sync_at = now() + case s.schedule when 'hourly' then interval '1 hour'
                                                      when 'daily' then interval '1 day' else interval '1 week' end
         where s.id in (select id from sources
                         where schedule is not null and not paused and next_sync_at <= now()
                         order by next_sync_at limit ${limit})
        returning s.*`;
    },
  };
}

export type SourceRepo = ReturnType<typeof createSourceRepo>;
