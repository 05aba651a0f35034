import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { createClient, type SupabaseClient } from '@supabase/supabase-js';
import { Hono } from 'hono';
import {
  calculateJwkThumbprint,
  createRemoteJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  type JWK,
  jwtVerify,
} from 'jose';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAuthServer } from '../../devstack/auth/server.ts';
import { freePort } from '../../devstack/ports.ts';
import { createPostgresServer, type RunningPostgres } from '../../devstack/postgres/server.ts';

const anonKey = 'sb_publishable_test-anon-key';
const serviceRoleKey = 'sb_secret_test-service-key';
// Not the default, so the test shows the option is what sets the lifetime.
const jwtExpirySeconds = 1234;
const password = 'correct horse battery';

let pg: RunningPostgres;
let sql: postgres.Sql;
let httpServer: ReturnType<typeof serve>;
let privateJwk: JWK;
let url: string;
let issuer: string;

const client = (key = anonKey): SupabaseClient =>
  createClient(url, key, { auth: { persistSession: false, autoRefreshToken: false } });

/** A raw call, to see status, headers and bodies that supabase-js hides. */
async function call(path: string, init: RequestInit & { headers?: Record<string, string> } = {}) {
  const response = await fetch(`${url}/auth/v1${path}`, init);
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

beforeAll(async () => {
  pg = await createPostgresServer({ host: '127.0.0.1', port: await freePort() });
  sql = postgres(pg.url, { max: 4, prepare: false, onnotice: () => {} });
  await sql.unsafe(await readFile(new URL('../../devstack/auth/schema.sql', import.meta.url), 'utf8'));

  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  privateJwk = { ...jwk, kid: await calculateJwkThumbprint(jwk) };

  // The issuer names the port, which is only known once the server listens.
  const root = new Hono();
  httpServer = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const server = serve({ fetch: root.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(server));
  });
  url = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;
  issuer = `${url}/auth/v1`;
  root.route(
    '/auth/v1',
    // A zero reuse interval makes reuse of a rotated refresh token fail at once.
    createAuthServer({
      sql,
      privateJwk,
      issuer,
      jwtExpirySeconds,
      anonKey,
      serviceRoleKey,
      refreshTokenReuseIntervalSeconds: 0,
    }),
  );
}, 60_000);

afterAll(async () => {
  await new Promise<void>((resolve) => (httpServer ? httpServer.close(() => resolve()) : resolve()));
  await sql?.end({ timeout: 1 });
  await pg?.stop();
});

describe('gateway', () => {
  it('refuses requests without a valid API key', async () => {
    const missing = await call('/signup', { method: 'POST', body: '{}' });
    expect(missing).toMatchObject({ status: 401, body: { message: 'No API key found in request' } });
    const wrong = await call('/signup', { method: 'POST', body: '{}', headers: { apikey: 'sb_publishable_nope' } });
    expect(wrong).toMatchObject({ status: 401, body: { message: 'Invalid API key' } });
  });

  it('publishes the public signing key without an API key', async () => {
    const { status, body } = await call('/.well-known/jwks.json');
    expect(status).toBe(200);
    expect(body.keys).toHaveLength(1);
    const [key] = body.keys;
    expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', kid: privateJwk.kid, alg: 'ES256', use: 'sig', key_ops: ['verify'] });
    expect(key).not.toHaveProperty('d');
  });

  it('answers unknown routes with a GoTrue-style 404', async () => {
    const { status, body } = await call('/nope', { headers: { apikey: anonKey } });
    expect(status).toBe(404);
    expect(body).toEqual({ code: 404, error_code: 'not_found', msg: 'Not Found' });
  });
});

describe('email and password users', () => {
  const email = 'Ada@Example.com';
  let userId: string;
  let refreshToken: string;

  it('signs up, confirmed at once, with a verifiable ES256 access token', async () => {
    const { data, error } = await client().auth.signUp({ email, password, options: { data: { full_name: 'Ada' } } });
    expect(error).toBeNull();
    const { session, user } = data;
    if (!session || !user) throw new Error('signUp returned no session');
    userId = user.id;
    refreshToken = session.refresh_token;

    expect(user).toMatchObject({
      aud: 'authenticated',
      role: 'authenticated',
      email: 'ada@example.com',
      phone: '',
      app_metadata: { provider: 'email', providers: ['email'] },
      user_metadata: { full_name: 'Ada', email_verified: true },
      identities: [],
      is_anonymous: false,
    });
    expect(user.email_confirmed_at).toBeTruthy();
    expect(user.last_sign_in_at).toBeTruthy();
    expect(session).toMatchObject({ token_type: 'bearer', expires_in: jwtExpirySeconds });

    const jwks = createRemoteJWKSet(new URL(`${url}/auth/v1/.well-known/jwks.json`));
    const { payload, protectedHeader } = await jwtVerify(session.access_token, jwks, {
      algorithms: ['ES256'],
      audience: 'authenticated',
      issuer,
    });
    expect(protectedHeader).toEqual({ alg: 'ES256', kid: privateJwk.kid, typ: 'JWT' });
    expect(payload).toMatchObject({
      sub: userId,
      email: 'ada@example.com',
      phone: '',
      role: 'authenticated',
      aal: 'aal1',
      is_anonymous: false,
      app_metadata: { provider: 'email', providers: ['email'] },
      user_metadata: { full_name: 'Ada' },
    });
    expect(payload.amr).toEqual([{ method: 'password', timestamp: expect.any(Number) }]);
    expect(payload.session_id).toMatch(/^[0-9a-f-]{36}$/);
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(jwtExpirySeconds);
    expect(session.expires_at).toBe(payload.exp);

    const [row] = await sql<{ encrypted_password: string }[]>`
      select encrypted_password from auth.users where id = ${userId}`;
    expect(row?.encrypted_password).toMatch(/^\$2[aby]\$10\$/);
  });

  it('refuses a taken email, a short password and a malformed address', async () => {
    const taken = await client().auth.signUp({ email: 'ada@example.com', password });
    expect(taken.error).toMatchObject({ code: 'user_already_exists', status: 422, message: 'User already registered' });

    const short = await client().auth.signUp({ email: 'short@example.com', password: '12345' });
    expect(short.error).toMatchObject({ name: 'AuthWeakPasswordError', code: 'weak_password', status: 422 });
    expect(short.error).toHaveProperty('reasons', ['length']);

    const malformed = await client().auth.signUp({ email: 'not-an-email', password });
    expect(malformed.error).toMatchObject({
      code: 'validation_failed',
      status: 400,
      message: 'Unable to validate email address: invalid format',
    });
  });

  it('signs in with the password and refuses a wrong one', async () => {
    const { data, error } = await client().auth.signInWithPassword({ email, password });
    expect(error).toBeNull();
    expect(data.user?.id).toBe(userId);
    expect(data.session?.refresh_token).not.toBe(refreshToken);

    const wrong = await client().auth.signInWithPassword({ email, password: 'wrong password' });
    expect(wrong.error).toMatchObject({ code: 'invalid_credentials', status: 400, message: 'Invalid login credentials' });
    const unknown = await client().auth.signInWithPassword({ email: 'nobody@example.com', password });
    expect(unknown.error).toMatchObject({ code: 'invalid_credentials', status: 400 });
  });

  it('writes errors in the shape the client asked for', async () => {
    const init = { method: 'POST', body: JSON.stringify({ email, password: 'wrong password' }) };
    const legacy = await call('/token?grant_type=password', { ...init, headers: { apikey: anonKey } });
    expect(legacy).toMatchObject({
      status: 400,
      body: { code: 400, error_code: 'invalid_credentials', msg: 'Invalid login credentials' },
    });
    const versioned = await call('/token?grant_type=password', {
      ...init,
      headers: { apikey: anonKey, 'X-Supabase-Api-Version': '2024-01-01' },
    });
    expect(versioned.body).toEqual({ code: 'invalid_credentials', message: 'Invalid login credentials' });
    expect(versioned.headers.get('x-supabase-api-version')).toBe('2024-01-01');

    const grant = await call('/token?grant_type=magic', { ...init, headers: { apikey: anonKey } });
    expect(grant).toMatchObject({ status: 400, body: { msg: 'unsupported_grant_type' } });
  });

  it('rotates refresh tokens and treats reuse of an old one as theft', async () => {
    const auth = client().auth;
    const first = await auth.refreshSession({ refresh_token: refreshToken });
    expect(first.error).toBeNull();
    const second = first.data.session?.refresh_token;
    expect(second).toBeTruthy();
    expect(second).not.toBe(refreshToken);
    expect(decodeJwt(first.data.session?.access_token ?? '').sub).toBe(userId);

    // A client that lost the last response may present the parent again and gets the current token.
    const retried = await auth.refreshSession({ refresh_token: refreshToken });
    expect(retried.data.session?.refresh_token).toBe(second);

    const third = await auth.refreshSession({ refresh_token: second ?? '' });
    expect(third.error).toBeNull();
    const reused = await auth.refreshSession({ refresh_token: refreshToken });
    expect(reused.error).toMatchObject({ code: 'refresh_token_already_used', status: 400 });
    // The whole family is revoked, including the newest token.
    const after = await auth.refreshSession({ refresh_token: third.data.session?.refresh_token ?? '' });
    expect(after.error).toMatchObject({ code: 'refresh_token_already_used' });

    const unknown = await auth.refreshSession({ refresh_token: 'doesnotexist' });
    expect(unknown.error).toMatchObject({ code: 'refresh_token_not_found', status: 400 });
  });

  it('returns the user for a valid access token and refuses a bad one', async () => {
    const { data } = await client().auth.signInWithPassword({ email, password });
    const accessToken = data.session?.access_token ?? '';
    const got = await client().auth.getUser(accessToken);
    expect(got.error).toBeNull();
    expect(got.data.user).toMatchObject({ id: userId, email: 'ada@example.com' });

    const bad = await client().auth.getUser(`${accessToken.slice(0, -4)}AAAA`);
    expect(bad.error).toMatchObject({ code: 'bad_jwt', status: 403 });
    const garbage = await call('/user', { headers: { apikey: anonKey, Authorization: 'Bearer not.a.jwt' } });
    expect(garbage).toMatchObject({ status: 403, body: { error_code: 'bad_jwt' } });
  });

  it('signs out: the session and its refresh tokens are gone', async () => {
    const user = client();
    const { data } = await user.auth.signInWithPassword({ email, password });
    const session = data.session;
    if (!session) throw new Error('no session');
    expect((await user.auth.signOut()).error).toBeNull();

    const got = await client().auth.getUser(session.access_token);
    expect(got.error?.name).toBe('AuthSessionMissingError');
    const refreshed = await client().auth.refreshSession({ refresh_token: session.refresh_token });
    expect(refreshed.error).toMatchObject({ code: 'refresh_token_not_found' });
  });
});

describe('admin API', () => {
  const admin = () => client(serviceRoleKey).auth.admin;
  let userId: string;

  it('merges app_metadata, and new tokens carry it', async () => {
    const { data } = await client().auth.signUp({ email: 'grace@example.com', password });
    userId = data.user?.id ?? '';

    const updated = await admin().updateUserById(userId, { app_metadata: { is_admin: true } });
    expect(updated.error).toBeNull();
    expect(updated.data.user?.app_metadata).toEqual({ provider: 'email', providers: ['email'], is_admin: true });

    const signedIn = await client().auth.signInWithPassword({ email: 'grace@example.com', password });
    const claims = decodeJwt(signedIn.data.session?.access_token ?? '');
    expect(claims.app_metadata).toMatchObject({ is_admin: true, provider: 'email' });

    const fetched = await admin().getUserById(userId);
    expect(fetched.data.user?.app_metadata).toMatchObject({ is_admin: true, provider: 'email' });

    // As in GoTrue, null removes a key.
    const cleared = await admin().updateUserById(userId, { app_metadata: { is_admin: null } });
    expect(cleared.data.user?.app_metadata).toEqual({ provider: 'email', providers: ['email'] });
  });

  it('creates, lists and deletes users', async () => {
    const created = await admin().createUser({
      email: 'linus@example.com',
      password,
      email_confirm: true,
      user_metadata: { team: 'kernel' },
    });
    expect(created.error).toBeNull();
    expect(created.data.user).toMatchObject({ email: 'linus@example.com', user_metadata: { team: 'kernel' } });
    expect((await client().auth.signInWithPassword({ email: 'linus@example.com', password })).error).toBeNull();

    const unconfirmed = await admin().createUser({ email: 'ken@example.com', password });
    expect(unconfirmed.data.user?.email_confirmed_at).toBeUndefined();
    const refused = await client().auth.signInWithPassword({ email: 'ken@example.com', password });
    expect(refused.error).toMatchObject({ code: 'email_not_confirmed' });

    const duplicate = await admin().createUser({ email: 'linus@example.com', password });
    expect(duplicate.error).toMatchObject({ code: 'email_exists', status: 422 });

    const page = await admin().listUsers({ page: 1, perPage: 2 });
    expect(page.error).toBeNull();
    expect(page.data.users).toHaveLength(2);
    expect(page.data).toMatchObject({ aud: 'authenticated', nextPage: 2 });
    expect(page.data).toHaveProperty('total', 4);

    const id = created.data.user?.id ?? '';
    expect((await admin().deleteUser(id)).error).toBeNull();
    expect((await admin().getUserById(id)).error).toMatchObject({ code: 'user_not_found', status: 404 });
    // auth-js checks the id itself, so this one goes around it.
    const malformed = await call('/admin/users/not-a-uuid', { headers: { apikey: serviceRoleKey } });
    expect(malformed).toMatchObject({ status: 404, body: { error_code: 'validation_failed' } });
  });

  it('refuses callers without the secret key', async () => {
    const anonymous = await client().auth.admin.getUserById(userId);
    expect(anonymous.error).toMatchObject({ code: 'not_admin', status: 403, message: 'User not allowed' });

    const { data } = await client().auth.signInWithPassword({ email: 'grace@example.com', password });
    const asUser = await call(`/admin/users/${userId}`, {
      headers: { apikey: anonKey, Authorization: `Bearer ${data.session?.access_token}` },
    });
    expect(asUser).toMatchObject({ status: 403, body: { error_code: 'not_admin' } });
  });
});

describe('failures', () => {
  it('answers 500 without internals when the database is unreachable', async () => {
    const broken = postgres('postgres://postgres:postgres@127.0.0.1:1/postgres', { max: 1, connect_timeout: 2 });
    const app = createAuthServer({ sql: broken, privateJwk, issuer, jwtExpirySeconds, anonKey, serviceRoleKey });
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const response = await app.request('/token?grant_type=password', {
        method: 'POST',
        headers: { apikey: anonKey },
        body: JSON.stringify({ email: 'a@example.com', password }),
      });
      expect(response.status).toBe(500);
      expect(await response.json()).toEqual({
        code: 500,
        error_code: 'unexpected_failure',
        msg: 'Unexpected failure, please check server logs for more information',
      });
      expect(logged).toHaveBeenCalled();
    } finally {
      logged.mockRestore();
      await broken.end({ timeout: 1 });
    }
  });
});

it('keeps the key id of the token header in the published key set', async () => {
  const { data } = await client().auth.signInWithPassword({ email: 'grace@example.com', password });
  const header = decodeProtectedHeader(data.session?.access_token ?? '');
  const { body } = await call('/.well-known/jwks.json');
  expect(body.keys.map((k: JWK) => k.kid)).toContain(header.kid);
});
