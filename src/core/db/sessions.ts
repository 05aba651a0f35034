import type { Sql } from './client.ts';

export interface SessionRow {
  id: string;
  title: string | null;
  /**
   * Every collection the session's questions searched, its own first (where it lives: listed, renamed,
   * deleted and shared there); a question may search several (`collection_ids`).
   */
  collection_ids: string[];
  created_at: string;
  updated_at: string;
}

export interface MessageRow {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  sources: unknown[];
  /** An answer's checked citations, once scored; null for questions and before scoring. */
  citations: unknown[] | null;
  /** The collections the exchange searched; the session's own for exchanges recorded before this was kept. */
  collection_ids: string[];
  created_at: string;
  /** An answer's evaluation record, to rate it; null for questions and for the copies a shared session holds. */
  evaluation_id: string | null;
  /** Its asker's rating of the answer; null for questions and answers not rated. */
  feedback: 'up' | 'down' | null;
}

/**
 * A session's columns, with its collections: its own first, then the others its questions searched, in
 * the order they first came (a question names at most MAX_QUERY_COLLECTIONS, fewer than 16). Arrays
 * leave as JSON: without fetched types (client.ts) postgres.js would hand a uuid[] over as its text.
 */
const SESSION_COLUMNS = (sql: Sql) => sql`
  s.id, s.title, s.created_at, s.updated_at,
  to_jsonb(array[s.collection_id] || array(
    select u.c from chat_messages m cross join lateral unnest(m.collection_ids) with ordinality as u(c, k)
     where m.session_id = s.id and u.c <> s.collection_id
     group by u.c order by min(m.position * 16 + u.k))) as collection_ids`;

export function createSessionRepo(sql: Sql) {
  return {
    /**
     * Inserts only while the user still owns or belongs to the collection. The
     * membership row is share-locked, so a concurrent member removal waits for this
     * insert and then deletes the new session too.
     */
    async insertIfParticipant(collectionId: string, userId: string, title: string | null): Promise<SessionRow | undefined> {
      const [row] = await sql<SessionRow[]>`
        insert into chat_sessions (collection_id, user_id, title)
        select ${collectionId}, ${userId}, ${title}
         where exists (select 1 from collections where id = ${collectionId} and user_id = ${userId})
            or exists (select 1 from collection_members
                        where collection_id = ${collectionId} and user_id = ${userId} for share)
        returning id, title, jsonb_build_array(collection_id) as collection_ids, created_at, updated_at`;
      return row;
    },

    listOwned(collectionId: string, userId: string): Promise<SessionRow[]> {
      return sql<SessionRow[]>`
        select ${SESSION_COLUMNS(sql)} from chat_sessions s
         where s.collection_id = ${collectionId} and s.user_id = ${userId}
         order by s.updated_at desc, s.created_at desc, s.id`;
    },

    async findOwned(collectionId: string, sessionId: string, userId: string): Promise<SessionRow | undefined> {
      const [row] = await sql<SessionRow[]>`
        select ${SESSION_COLUMNS(sql)} from chat_sessions s
         where s.id = ${sessionId} and s.collection_id = ${collectionId} and s.user_id = ${userId}`;
      return row;
    },

    /** The user's session when it lives in one of `collectionIds` (a question over them may go on in it). */
    async findOwnedIn(
      collectionIds: readonly string[],
      sessionId: string,
      userId: string,
    ): Promise<{ id: string; collection_id: string } | undefined> {
      if (collectionIds.length === 0) return undefined;
      const [row] = await sql<{ id: string; collection_id: string }[]>`
        select id, collection_id from chat_sessions
         where id = ${sessionId} and user_id = ${userId} and collection_id in ${sql(collectionIds as string[])}`;
      return row;
    },

    /** The session's last `limit` messages, oldest first. */
    async recentMessages(sessionId: string, limit: number): Promise<Pick<MessageRow, 'role' | 'content'>[]> {
      const rows = await sql<Pick<MessageRow, 'role' | 'content'>[]>`
        select role, content from chat_messages where session_id = ${sessionId} order by position desc limit ${limit}`;
      return rows.reverse();
    },

    messages(sessionId: string): Promise<MessageRow[]> {
      return sql<MessageRow[]>`
        select m.id, m.role, m.content, m.sources, m.citations,
               to_jsonb(coalesce(m.collection_ids, array[s.collection_id])) as collection_ids, m.created_at,
               m.evaluation_id, e.feedback
          from chat_messages m join chat_sessions s on s.id = m.session_id
               left join evaluations e on e.id = m.evaluation_id
         where m.session_id = ${sessionId} order by m.position`;
    },

    async rename(collectionId: string, sessionId: string, userId: string, title: string): Promise<boolean> {
      const rows = await sql`
        update chat_sessions set title = ${title}, updated_at = now()
         where id = ${sessionId} and collection_id = ${collectionId} and user_id = ${userId} returning id`;
      return rows.length > 0;
    },

    async delete(collectionId: string, sessionId: string, userId: string): Promise<boolean> {
      const rows = await sql`
        delete from chat_sessions
         where id = ${sessionId} and collection_id = ${collectionId} and user_id = ${userId} returning id`;
      return rows.length > 0;
    },

    /** Copies a session and its messages, in order, to another user, in one transaction. */
    copy(sessionId: string, targetUserId: string): Promise<string | undefined> {
      return sql.begin(async (tx) => {
        const [copy] = await tx<{ id: string }[]>`
          insert into chat_sessions (collection_id, user_id, title)
          select collection_id, ${targetUserId}, title from chat_sessions where id = ${sessionId}
          returning id`;
        if (!copy) return undefined;
        await tx`
          insert into chat_messages (session_id, role, content, sources, collection_ids, created_at)
          select ${copy.id}, role, content, sources, collection_ids, created_at from chat_messages
           where session_id = ${sessionId} order by position`;
        return copy.id;
      });
    },
  };
}

export type SessionRepo = ReturnType<typeof createSessionRepo>;
