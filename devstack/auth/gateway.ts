import type { Context, MiddlewareHandler } from 'hono';
import type { AuthDeps } from './deps.ts';
import { badRequest, forbidden, unauthorized } from './errors.ts';
import { findSession, type SessionRow } from './sessions.ts';
import type { AccessTokenClaims } from './tokens.ts';
import { findUserById, type UserRow } from './users.ts';
import { UUID_PATTERN } from './validation.ts';

// Comparing every byte whatever the input keeps the keys from leaking through response timing.
function sameKey(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = new TextEncoder().encode(given);
  const b = new TextEncoder().encode(expected);
  let diff = a.length ^ b.length;
  for (let i = 0; i < b.length; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

const apiKeyOf = (c: Context) => c.req.header('apikey') ?? c.req.query('apikey');

/**
 * What Supabase's API gateway does before GoTrue sees a request: no key, or a key
 * that is neither the publishable nor the secret one, ends the request with 401
 * in the gateway's own body shape (not GoTrue's).
 */
export function apiKeyGate(deps: AuthDeps): MiddlewareHandler {
  return async (c, next) => {
    const key = apiKeyOf(c);
    if (!key) return c.json({ message: 'No API key found in request' }, 401);
    if (!sameKey(key, deps.anonKey) && !sameKey(key, deps.serviceRoleKey)) {
      return c.json({ message: 'Invalid API key' }, 401);
    }
    await next();
  };
}

/**
 * The bearer GoTrue would see. Without an Authorization header the gateway forwards
 * the API key in its place, so an opaque key can show up here as well as a JWT.
 */
function bearerOf(c: Context): string {
  const header = c.req.header('Authorization');
  if (header === undefined) return apiKeyOf(c) ?? '';
  const match = /^[Bb]earer (\S+)$/.exec(header);
  if (!match?.[1]) throw unauthorized('no_authorization', 'This endpoint requires a Bearer token');
  return match[1];
}

async function verifyJwt(deps: AuthDeps, token: string): Promise<AccessTokenClaims> {
  try {
    return await deps.signer.verify(token);
  } catch (error) {
    const reason = error instanceof Error ? error.message : 'token is malformed';
    throw forbidden('bad_jwt', `invalid JWT: unable to parse or verify signature, ${reason}`);
  }
}

export interface Authenticated {
  user: UserRow;
  session: SessionRow | undefined;
}

const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** GoTrue's requireAuthentication: a valid access token whose user and session still exist. */
export async function requireUser(c: Context, deps: AuthDeps): Promise<Authenticated> {
  const token = bearerOf(c);
  // The gateway turns an opaque key into a JWT without a subject.
  if (sameKey(token, deps.anonKey) || sameKey(token, deps.serviceRoleKey)) {
    throw forbidden('bad_jwt', 'invalid claim: missing sub claim');
  }
  const claims = await verifyJwt(deps, token);
  if (!claims.sub) throw forbidden('bad_jwt', 'invalid claim: missing sub claim');
  if (!UUID_PATTERN.test(claims.sub)) throw badRequest('bad_jwt', 'invalid claim: sub claim must be a UUID');

  const user = await findUserById(deps.sql, claims.sub);
  if (!user) throw forbidden('user_not_found', 'User from sub claim in JWT does not exist');

  let session: SessionRow | undefined;
  const sessionId = claims.session_id;
  if (sessionId && sessionId !== NIL_UUID) {
    if (!UUID_PATTERN.test(sessionId)) throw forbidden('bad_jwt', 'invalid claim: session_id claim must be a UUID');
    session = await findSession(deps.sql, sessionId);
    if (!session) throw forbidden('session_not_found', 'Session from session_id claim in JWT does not exist');
  }
  return { user, session };
}

const ADMIN_ROLES = new Set(['service_role', 'supabase_admin']);

/**
 * The secret key, sent as apikey or as the bearer, stands for the service_role JWT
 * the gateway would mint from it. A JWT signed with our key and carrying an admin
 * role is accepted too, as GoTrue accepts any token with an admin role.
 */
export async function requireAdmin(c: Context, deps: AuthDeps): Promise<void> {
  if (sameKey(apiKeyOf(c), deps.serviceRoleKey)) return;
  const token = bearerOf(c);
  if (sameKey(token, deps.serviceRoleKey)) return;
  if (!sameKey(token, deps.anonKey)) {
    const claims = await verifyJwt(deps, token);
    if (claims.role && ADMIN_ROLES.has(claims.role)) return;
  }
  throw forbidden('not_admin', 'User not allowed');
}
