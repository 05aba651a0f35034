import type { Scope } from '../caller.ts';
import type { Sql } from './client.ts';

/** A key as its owner may see it: never the key, never its hash. */
export interface ApiKeyRow {
  id: string;
  name: string;
  prefix: string;
  scopes: Scope[];
  collection_id: string | null;
  expires_at: string | null;
  last_used_at: string | null;
  created_at: string;
}

/** What authentication needs of a key found by its hash. */
export interface KeyCredential {
  id: string;
  user_id: string;
  scopes: Scope[];
  collection_id: string | null;
  expired: boolean;
  revoked: boolean;
  /** Unused, or not marked used within the last minute. */
  stale_use: boolean;
}

export interface NewApiKey {
  name: string;
  prefix: string;
  keyHash: string;
  scopes: Scope[];
  collectionId: string | null;
  expiresAt: string | null;
}

const LISTED = 'id, name, prefix, scopes, collection_id, expires_at, last_used_at, created_at';

export function createApiKeyRepo(sql: Sql) {
  return {
    /**
     * Inserts the key unless its owner already holds `max` active ones (not revoked, not expired): then
     * null. Concurrent creations by one user take turns on a lock of that user's own, so that two
     * requests at `max - 1` cannot both get in.
     */
    insertWithin(userId: string, key: NewApiKey, max: number): Promise<ApiKeyRow | null> {
      return sql.begin(async (tx) => {
        await tx`select pg_advisory_xact_lock(hashtextextended(${`api_keys:${userId}`}, 0))`;
        const [held] = await tx<{ active: number }[]>`
          select count(*)::int as active from api_keys
           where user_id = ${userId} and revoked_at is null and (expires_at is null or expires_at > now())`;
        if ((held?.active ?? 0) >= max) return null;
        const [row] = await tx<ApiKeyRow[]>`
          insert into api_keys (user_id, name, prefix, key_hash, scopes, collection_id, expires_at)
          values (${userId}, ${key.name}, ${key.prefix}, ${key.keyHash}, ${tx.json(key.scopes)}, ${key.collectionId},
                  ${key.expiresAt})
          returning ${tx.unsafe(LISTED)}`;
        return row as ApiKeyRow;
      });
    },

    /** The owner's keys that are not revoked, newest first; expired ones stay listed until revoked. */
    list(userId: string): Promise<ApiKeyRow[]> {
      return sql<ApiKeyRow[]>`
        select ${sql.unsafe(LISTED)} from api_keys
         where user_id = ${userId} and revoked_at is null
         order by created_at desc, id`;
    },

    /** Only the owner's own key, and only once. */
    async revoke(userId: string, id: string): Promise<boolean> {
      const rows = await sql`
        update api_keys set revoked_at = now() where id = ${id} and user_id = ${userId} and revoked_at is null returning id`;
      return rows.length > 0;
    },

    async findByHash(keyHash: string): Promise<KeyCredential | undefined> {
      const [row] = await sql<KeyCredential[]>`
        select id, user_id, scopes, collection_id,
               coalesce(expires_at <= now(), false) as expired,
               revoked_at is not null as revoked,
               coalesce(last_used_at < now() - interval '1 minute', true) as stale_use
          from api_keys where key_hash = ${keyHash}`;
      return row;
    },

    /**
     * At most once a minute, which is enough to tell a key in use from a forgotten one without a write per
     * request; conditional, so that concurrent requests write it once.
     */
    async markUsed(id: string): Promise<void> {
      await sql`
        update api_keys set last_used_at = now()
         where id = ${id} and (last_used_at is null or last_used_at < now() - interval '1 minute')`;
    },
  };
}

export type ApiKeyRepo = ReturnType<typeof createApiKeyRepo>;
