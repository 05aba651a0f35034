import type postgres from 'postgres';
import type { Sql } from './client.ts';

export interface CollectionRow {
  id: string;
  name: string;
  config: Record<string, unknown>;
  user_id: string;
  created_at: string;
}

export interface CollectionAccessRow extends CollectionRow {
  /** The caller's membership permission; null when the caller is not a member. */
  member_permission: 'query' | 'ingest' | null;
}

export interface ListedCollection extends CollectionRow {
  shared?: true;
  permission?: 'query' | 'ingest';
}

export function createCollectionRepo(sql: Sql) {
  return {
    async insert(userId: string, name: string): Promise<CollectionRow> {
      const [row] = await sql<CollectionRow[]>`
        insert into collections (user_id, name) values (${userId}, ${name})
        returning id, name, config, user_id, created_at`;
      return row as CollectionRow;
    },

    /** Owned and shared collections, newest first. */
    async listVisibleTo(userId: string): Promise<ListedCollection[]> {
      const rows = await sql<(CollectionRow & { permission: 'query' | 'ingest' | null })[]>`
        select c.id, c.name, c.config, c.user_id, c.created_at, null as permission
          from collections c where c.user_id = ${userId} and c.deleting_at is null
        union all
        select c.id, c.name, c.config, c.user_id, c.created_at, m.permission
          from collections c join collection_members m on m.collection_id = c.id
         where m.user_id = ${userId} and c.deleting_at is null
        order by created_at desc, id`;
      return rows.map(({ permission, ...row }) => (permission ? { ...row, shared: true, permission } : row));
    },

    /** A collection being deleted is found only by its deletion (`deleting`), which a retry finishes. */
    async findWithAccess(
      id: string,
      userId: string,
      options: { deleting?: boolean } = {},
    ): Promise<CollectionAccessRow | undefined> {
      const [row] = await sql<CollectionAccessRow[]>`
        select c.id, c.name, c.config, c.user_id, c.created_at, m.permission as member_permission
          from collections c
          left join collection_members m on m.collection_id = c.id and m.user_id = ${userId}
         where c.id = ${id} ${options.deleting ? sql`` : sql`and c.deleting_at is null`}`;
      return row;
    },

    /**
     * The first step of a deletion, before its namespace and files go: from now on it is neither listed nor
     * reached (404), and an ingest step that upserts into its namespace takes back what it wrote (it reads
     * this mark after its upsert).
     */
    async markDeleting(id: string): Promise<boolean> {
      const rows = await sql`update collections set deleting_at = coalesce(deleting_at, now()) where id = ${id} returning id`;
      return rows.length > 0;
    },

    /** Child rows (shares, members, sessions, messages) go with it by cascade. */
    async delete(id: string): Promise<boolean> {
      const rows = await sql`delete from collections where id = ${id} returning id`;
      return rows.length > 0;
    },

    async replaceConfig(id: string, config: Record<string, unknown>): Promise<Record<string, unknown> | undefined> {
      const [row] = await sql<{ config: Record<string, unknown> }[]>`
        update collections set config = ${sql.json(config as postgres.JSONValue)} where id = ${id} returning config`;
      return row?.config;
    },
  };
}

export type CollectionRepo = ReturnType<typeof createCollectionRepo>;
