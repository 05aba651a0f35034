import type postgres from 'postgres';
import type { Sql } from './client.ts';

/** What an entry records besides when: who, through which request, did what to what. */
export interface AuditEntry {
  actor_id: string;
  api_key_id: string | null;
  request_id: string;
  client_address: string | null;
  action: string;
  target_type: string;
  target_id: string;
  collection_id: string | null;
  /** Fields set, or `{field: {from, to}}`; never a secret (the services choose what goes in). */
  diff: Record<string, unknown>;
}

export interface AuditRow extends AuditEntry {
  id: string;
  created_at: string;
}

/** Which entries a reader gets: one collection's, one actor's, or (an admin) everyone's; then the filters. */
export interface AuditQuery {
  collectionId?: string;
  actorId?: string;
  action?: string;
  since?: string;
  until?: string;
  limit: number;
  offset: number;
}

/** The audit log's SQL: entries are inserted and read here, and removed only by the retention sweep. */
export function createAuditRepo(sql: Sql) {
  return {
    async insert(entry: AuditEntry): Promise<void> {
      await sql`
        insert into audit_log (actor_id, api_key_id, request_id, client_address, action, target_type, target_id,
                               collection_id, diff)
        values (${entry.actor_id}, ${entry.api_key_id}, ${entry.request_id}, ${entry.client_address}, ${entry.action},
                ${entry.target_type}, ${entry.target_id}, ${entry.collection_id},
                ${sql.json(entry.diff as postgres.JSONValue)})`;
    },

    /** Newest first; `since` inclusive, `until` exclusive. */
    list(query: AuditQuery): Promise<AuditRow[]> {
      return sql<AuditRow[]>`
        select id, created_at, actor_id, api_key_id, request_id, client_address, action, target_type, target_id,
               collection_id, diff
          from audit_log
         where true
           ${query.collectionId ? sql`and collection_id = ${query.collectionId}` : sql``}
           ${query.actorId ? sql`and actor_id = ${query.actorId}` : sql``}
           ${query.action ? sql`and action = ${query.action}` : sql``}
           ${query.since ? sql`and created_at >= ${query.since}` : sql``}
           ${query.until ? sql`and created_at < ${query.until}` : sql``}
         order by created_at desc, id desc
         limit ${query.limit} offset ${query.offset}`;
    },

    /** The retention sweep: entries older than `days`, a batch at a time (so one sweep never holds a long lock). */
    async removeOlderThan(days: number, limit: number): Promise<number> {
      const removed = await sql`
        delete from audit_log
         where id in (select id from audit_log where created_at < now() - make_interval(days => ${days})
                       order by created_at limit ${limit})`;
      return removed.count;
    },
  };
}

export type AuditRepo = ReturnType<typeof createAuditRepo>;
