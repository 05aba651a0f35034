import type { Sql } from './client.ts';

export type Permission = 'query' | 'ingest';

export interface ShareRow {
  id: string;
  collection_id: string;
  share_token: string;
  permission: Permission;
  created_at: string;
}

export function createShareRepo(sql: Sql) {
  return {
    async insert(collectionId: string, createdBy: string, permission: Permission, token: string): Promise<ShareRow> {
      const [row] = await sql<ShareRow[]>`
        insert into collection_shares (collection_id, created_by, permission, share_token)
        values (${collectionId}, ${createdBy}, ${permission}, ${token})
        returning id, collection_id, share_token, permission, created_at`;
      return row as ShareRow;
    },

    list(collectionId: string): Promise<ShareRow[]> {
      return sql<ShareRow[]>`
        select id, collection_id, share_token, permission, created_at
          from collection_shares where collection_id = ${collectionId}
         order by created_at, id`;
    },

    async delete(collectionId: string, shareId: string): Promise<boolean> {
      const rows = await sql`
        delete from collection_shares where id = ${shareId} and collection_id = ${collectionId} returning id`;
      return rows.length > 0;
    },

    async findByToken(token: string): Promise<ShareRow | undefined> {
      const [row] = await sql<ShareRow[]>`
        select id, collection_id, share_token, permission, created_at
          from collection_shares where share_token = ${token}`;
      return row;
    },
  };
}

export type ShareRepo = ReturnType<typeof createShareRepo>;
