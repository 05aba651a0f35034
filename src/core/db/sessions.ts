import type { Sql } from './client.ts';

export interface SessionRow {
  id: string;
  title: string | null;
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
  created_at: string;
}

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
        returning id, title, created_at, updated_at`;
      return row;
    },

    listOwned(collectionId: string, userId: string): Promise<SessionRow[]> {
      return sql<SessionRow[]>`
        select id, title, created_at, updated_at from chat_sessions
         where collection_id = ${collectionId} and user_id = ${userId}
         order by updated_at desc, created_at desc, id`;
    },

    async findOwned(collectionId: string, sessionId: string, userId: string): Promise<SessionRow | undefined> {
      const [row] = await sql<SessionRow[]>`
        select id, title, created_at, updated_at from chat_sessions
         where id = ${sessionId} and collection_id = ${collectionId} and user_id = ${userId}`;
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
        select id, role, content, sources, citations, created_at from chat_messages
         where session_id = ${sessionId} order by position`;
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
          insert into chat_messages (session_id, role, content, sources, created_at)
          select ${copy.id}, role, content, sources, created_at from chat_messages
           where session_id = ${sessionId} order by position`;
        return copy.id;
      });
    },
  };
}

export type SessionRepo = ReturnType<typeof createSessionRepo>;
