import { type Context, Hono } from 'hono';
import { cors } from 'hono/cors';
import type { JWK } from 'jose';
import type { Sql } from 'postgres';
import { adminCreateUser, adminDeleteUser, adminGetUser, adminListUsers, adminUpdateUser } from './admin.ts';
import type { AuthDeps } from './deps.ts';
import { notFound, renderError } from './errors.ts';
import { apiKeyGate } from './gateway.ts';
import { token } from './grants.ts';
import { signup } from './signup.ts';
import { createTokenSigner } from './tokens.ts';
import { getUser, logout } from './user.ts';

export interface AuthOptions {
  /** postgres.js client connected to the database holding the auth schema. */
  sql: Sql;
  /** ES256 private key: kty EC, crv P-256, d, x, y and kid. */
  privateJwk: JWK;
  /** The iss claim, e.g. 'http://127.0.0.1:54321/auth/v1'. */
  issuer: string;
  /** Access token lifetime. */
  jwtExpirySeconds: number;
  /** The publishable key, e.g. 'sb_publishable_...'. */
  anonKey: string;
  /** The secret key, e.g. 'sb_secret_...'; it authorises the admin API. */
  serviceRoleKey: string;
  /** How long a rotated refresh token may still be presented; GoTrue's default is 10 seconds. */
  refreshTokenReuseIntervalSeconds?: number;
}

/**
 * The subset of Supabase Auth (GoTrue v2) that supabase-js needs for email and
 * password users, plus the gateway's API key check. Routes are relative to
 * /auth/v1: mount with app.route('/auth/v1', createAuthServer(options)).
 */
export function createAuthServer(options: AuthOptions): Hono {
  const deps: AuthDeps = {
    sql: options.sql,
    signer: createTokenSigner(options.privateJwk),
    issuer: options.issuer,
    jwtExpirySeconds: options.jwtExpirySeconds,
    anonKey: options.anonKey,
    serviceRoleKey: options.serviceRoleKey,
    refreshTokenReuseIntervalSeconds: options.refreshTokenReuseIntervalSeconds ?? 10,
  };
  const withDeps = (handler: (c: Context, deps: AuthDeps) => Promise<Response>) => (c: Context) => handler(c, deps);

  const app = new Hono();
  app.onError((err, c) => renderError(c, err));

  // Browsers call the auth API cross-origin; preflights carry no API key.
  app.use(
    '*',
    cors({
      origin: '*',
      allowMethods: ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS'],
      exposeHeaders: ['X-Total-Count', 'Link', 'X-Supabase-Api-Version'],
    }),
  );

  // Open like on Supabase, so token verifiers need no key; registered before the gate.
  app.get('/.well-known/jwks.json', (c) => {
    c.header('Cache-Control', 'public, max-age=600');
    return c.json({ keys: [deps.signer.publicJwk] });
  });

  app.use('*', apiKeyGate(deps));

  app.get('/health', (c) =>
    c.json({ version: 'devstack', name: 'GoTrue', description: 'GoTrue is a user registration and authentication API' }),
  );
  app.post('/signup', withDeps(signup));
  app.post('/token', withDeps(token));
  app.get('/user', withDeps(getUser));
  app.post('/logout', withDeps(logout));
  app.get('/admin/users', withDeps(adminListUsers));
  app.post('/admin/users', withDeps(adminCreateUser));
  app.get('/admin/users/:id', withDeps(adminGetUser));
  app.put('/admin/users/:id', withDeps(adminUpdateUser));
  app.delete('/admin/users/:id', withDeps(adminDeleteUser));

  // A catch-all route rather than notFound(): a sub-app's notFound handler is not used once mounted.
  app.all('*', () => {
    throw notFound('not_found', 'Not Found');
  });
  return app;
}
