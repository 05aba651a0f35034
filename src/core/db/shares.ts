import type { Sql } from './client.ts';

export type Permission = 'query' | 'ingest';

/** A share as stored: the token itself is never kept, only its hash (not returned) and first characters. */
export interface ShareRow {
  id: string;
  collection_id: string;
  token_prefix: string;
  permission: Permission;
  created_at: string;
  expires_at: string | null;
  max_uses: number | null;
  uses: number;
}

export interface NewShare {
  permission: Permission;
  tokenHash: string;
  tokenPrefix: string;
  expiresAt: string | null;
  maxUses: number | null;
}

export function createShareRepo(sql: Sql) {
  return {
    async insert(collectionId: string, createdBy: string, share: NewShare): Promise<ShareRow> {
      const [row] = await sql<ShareRow[]>`
        insert into collection_shares (collection_id, created_by, permission, token_hash, token_prefix, expires_at, max_uses)
        values (${collectionId}, ${createdBy}, ${share.permission}, ${share.tokenHash}, ${share.tokenPrefix},
                ${share.expiresAt}, ${share.maxUses})
        returning id, collection_id, token_prefix, permission, created_at, expires_at, max_uses, uses`;
      return row as ShareRow;
    },

    list(collectionId: string): Promise<ShareRow[]> {
      return sql<ShareRow[]>`
        select id, collection_id, token_prefix, permission, created_at, expires_at, max_uses, uses
          from collection_shares where collection_id = ${collectionId}
         order by created_at, id`;
    },

    async delete(collectionId: string, shareId: string): Promise<boolean> {
      const rows = await sql`
        delete from collection_shares where id = ${shareId} and collection_id = ${collectionId} returning id`;
      return rows.length > 0;
    },

    /** Found whether or not it has expired or been used up: the join says which. */
    async findByHash(tokenHash: string): Promise<ShareRow | undefined> {
      const [row] = await sql<ShareRow[]>`
        select id, collection_id, token_prefix, permission, created_at, expires_at, max_uses, uses
          from collection_shares where token_hash = ${tokenHash}`;
      return row;
    },
  };
}

export type ShareRepo = ReturnType<typeof createShareRepo>;
