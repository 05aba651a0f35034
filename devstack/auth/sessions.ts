import { newRefreshToken } from './tokens.ts';
import type { Db } from './users.ts';

export interface SessionRow {
  id: string;
  user_id: string;
  created_at: Date;
}

export interface RefreshTokenRow {
  id: string;
  token: string;
  user_id: string;
  session_id: string | null;
  parent: string | null;
  revoked: boolean;
  updated_at: Date;
}

export async function createSession(db: Db, userId: string): Promise<{ session: SessionRow; refreshToken: string }> {
  const [session] = await db<SessionRow[]>`
    insert into auth.sessions (id, user_id) values (${crypto.randomUUID()}, ${userId})
    returning id, user_id, created_at`;
  if (!session) throw new Error('insert into auth.sessions returned no row');
  const refreshToken = await insertRefreshToken(db, userId, session.id, null);
  return { session, refreshToken };
}

async function insertRefreshToken(db: Db, userId: string, sessionId: string, parent: string | null): Promise<string> {
  const token = newRefreshToken();
  await db`
    insert into auth.refresh_tokens (token, user_id, session_id, parent)
    values (${token}, ${userId}, ${sessionId}, ${parent})`;
  return token;
}

export async function findSession(db: Db, id: string): Promise<SessionRow | undefined> {
  const [row] = await db<SessionRow[]>`select id, user_id, created_at from auth.sessions where id = ${id}`;
  return row;
}

/** Locks the token row so two refreshes of the same token cannot both rotate it. */
export async function findRefreshTokenForUpdate(db: Db, token: string): Promise<RefreshTokenRow | undefined> {
  const [row] = await db<RefreshTokenRow[]>`
    select id::text, token, user_id, session_id, parent, revoked, updated_at
    from auth.refresh_tokens where token = ${token} for update`;
  return row;
}

/** The newest unrevoked token of the session: the one its client should be holding. */
export async function findActiveRefreshToken(db: Db, sessionId: string): Promise<RefreshTokenRow | undefined> {
  const [row] = await db<RefreshTokenRow[]>`
    select id::text, token, user_id, session_id, parent, revoked, updated_at
    from auth.refresh_tokens where session_id = ${sessionId} and not revoked
    order by id desc limit 1`;
  return row;
}

/** Revokes the presented token and issues its child in the same session (GoTrue's GrantRefreshTokenSwap). */
export async function rotateRefreshToken(db: Db, old: RefreshTokenRow, sessionId: string): Promise<string> {
  await db`update auth.refresh_tokens set revoked = true, updated_at = now() where id = ${old.id}`;
  await db`update auth.sessions set updated_at = now() where id = ${sessionId}`;
  return insertRefreshToken(db, old.user_id, sessionId, old.token);
}

/** A revoked token came back: treat the whole session's token family as stolen. */
export async function revokeSessionTokens(db: Db, sessionId: string): Promise<void> {
  await db`
    update auth.refresh_tokens set revoked = true, updated_at = now()
    where session_id = ${sessionId} and not revoked`;
}

export type LogoutScope = 'global' | 'local' | 'others';

/** Deleting sessions deletes their refresh tokens too (on delete cascade). */
export async function endSessions(db: Db, userId: string, sessionId: string | undefined, scope: LogoutScope) {
  if (scope === 'local' && sessionId) {
    await db`delete from auth.sessions where id = ${sessionId}`;
  } else if (scope === 'others' && sessionId) {
    await db`delete from auth.sessions where user_id = ${userId} and id <> ${sessionId}`;
  } else {
    await db`delete from auth.sessions where user_id = ${userId}`;
  }
}
