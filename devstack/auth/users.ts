import type { JSONValue, Sql, TransactionSql } from 'postgres';

/** The pool or an open transaction: every query helper takes either. */
export type Db = Sql | TransactionSql;

export type JsonObject = Record<string, unknown>;

export interface UserRow {
  id: string;
  aud: string;
  role: string;
  email: string | null;
  encrypted_password: string | null;
  email_confirmed_at: Date | null;
  last_sign_in_at: Date | null;
  raw_app_meta_data: JsonObject;
  raw_user_meta_data: JsonObject;
  is_anonymous: boolean;
  created_at: Date;
  updated_at: Date;
}

export const AUDIENCE = 'authenticated';

/** The app_metadata GoTrue gives a user who signs up with an email address. */
export const emailProviderMetadata = (): JsonObject => ({ provider: 'email', providers: ['email'] });

// Metadata arrives as parsed JSON from a request body, so it is JSON by construction.
const json = (db: Db, value: JsonObject) => db.json(value as JSONValue);

const COLUMNS = `id, aud, role, email, encrypted_password, email_confirmed_at, last_sign_in_at,
  raw_app_meta_data, raw_user_meta_data, is_anonymous, created_at, updated_at`;

export async function findUserById(db: Db, id: string, forUpdate = false): Promise<UserRow | undefined> {
  const lock = forUpdate ? db`for update` : db``;
  const [row] = await db<UserRow[]>`select ${db.unsafe(COLUMNS)} from auth.users where id = ${id} ${lock}`;
  return row;
}

/** Emails are stored lower-cased, as GoTrue does, so lookups compare lower-cased too. */
export async function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  const [row] = await db<UserRow[]>`
    select ${db.unsafe(COLUMNS)} from auth.users
    where lower(email) = ${email.toLowerCase()} and aud = ${AUDIENCE}`;
  return row;
}

export interface NewUser {
  id: string;
  email: string;
  role: string;
  encryptedPassword: string;
  confirmed: boolean;
  appMetadata: JsonObject;
  userMetadata: JsonObject;
}

export async function insertUser(db: Db, user: NewUser): Promise<UserRow> {
  const [row] = await db<UserRow[]>`
    insert into auth.users (id, aud, role, email, encrypted_password, email_confirmed_at,
                            raw_app_meta_data, raw_user_meta_data)
    values (${user.id}, ${AUDIENCE}, ${user.role}, ${user.email}, ${user.encryptedPassword},
            ${user.confirmed ? db`now()` : null}, ${json(db, user.appMetadata)}, ${json(db, user.userMetadata)})
    returning ${db.unsafe(COLUMNS)}`;
  if (!row) throw new Error('insert into auth.users returned no row');
  return row;
}

/** Writes back every field an endpoint may change; callers read the row for update first. */
export async function saveUser(db: Db, user: UserRow): Promise<UserRow> {
  const [row] = await db<UserRow[]>`
    update auth.users set
      role = ${user.role},
      email = ${user.email},
      encrypted_password = ${user.encrypted_password},
      email_confirmed_at = ${user.email_confirmed_at},
      raw_app_meta_data = ${json(db, user.raw_app_meta_data)},
      raw_user_meta_data = ${json(db, user.raw_user_meta_data)},
      updated_at = now()
    where id = ${user.id}
    returning ${db.unsafe(COLUMNS)}`;
  if (!row) throw new Error(`user ${user.id} vanished during update`);
  return row;
}

export async function touchLastSignIn(db: Db, id: string): Promise<UserRow> {
  const [row] = await db<UserRow[]>`
    update auth.users set last_sign_in_at = now(), updated_at = now()
    where id = ${id} returning ${db.unsafe(COLUMNS)}`;
  if (!row) throw new Error(`user ${id} vanished during sign-in`);
  return row;
}

export async function deleteUser(db: Db, id: string): Promise<void> {
  await db`delete from auth.users where id = ${id}`;
}

export interface UserPage {
  users: UserRow[];
  total: number;
}

/** GoTrue's admin listing: newest first, optionally filtered on email or full name. */
export async function listUsers(db: Db, page: number, perPage: number, filter: string): Promise<UserPage> {
  const pattern = `%${filter}%`;
  const where = filter
    ? db`aud = ${AUDIENCE} and (email ilike ${pattern} or raw_user_meta_data->>'full_name' ilike ${pattern})`
    : db`aud = ${AUDIENCE}`;
  const [count] = await db<{ total: number }[]>`select count(*)::int as total from auth.users where ${where}`;
  const users = await db<UserRow[]>`
    select ${db.unsafe(COLUMNS)} from auth.users where ${where}
    order by created_at desc, id
    limit ${perPage} offset ${(page - 1) * perPage}`;
  return { users: [...users], total: count?.total ?? 0 };
}

/**
 * Top-level keys of the update replace those of the stored object and a null
 * value deletes the key: GoTrue's UpdateAppMetaData / UpdateUserMetaData.
 */
export function mergeMetadata(current: JsonObject, updates: JsonObject): JsonObject {
  const merged: JsonObject = { ...current };
  for (const [key, value] of Object.entries(updates)) {
    if (value === null || value === undefined) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

/** The user object as GoTrue serialises it (fields it omits when empty stay absent). */
export function userJson(user: UserRow): Record<string, unknown> {
  const iso = (d: Date | null) => (d ? d.toISOString() : undefined);
  return {
    id: user.id,
    aud: user.aud,
    role: user.role,
    email: user.email ?? '',
    email_confirmed_at: iso(user.email_confirmed_at),
    phone: '',
    confirmed_at: iso(user.email_confirmed_at),
    last_sign_in_at: iso(user.last_sign_in_at),
    app_metadata: user.raw_app_meta_data,
    user_metadata: user.raw_user_meta_data,
    identities: [],
    created_at: user.created_at.toISOString(),
    updated_at: user.updated_at.toISOString(),
    is_anonymous: user.is_anonymous,
  };
}

/** Postgres' unique_violation, e.g. two users racing for one email address. */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
}
