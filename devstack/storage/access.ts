import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context } from 'hono';
import { accessDenied } from './errors.ts';

/** Who a request acts as: the secret key bypasses policies; the publishable key has none granted. */
export type Role = 'service_role' | 'anon';

export interface ApiKeys {
  serviceRoleKey: string;
  anonKey: string;
}

/** Rejected before Storage sees the request, as the API gateway does; hence a real 401. */
export class GatewayError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GatewayError';
  }
}

// Hashing first gives equal lengths, so the comparison takes the same time whatever was sent.
function sameKey(given: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

function bearerOf(c: Context): string | undefined {
  const header = c.req.header('Authorization');
  return header?.replace(/^Bearer\s+/i, '').trim() || undefined;
}

/**
 * supabase-js sends the project key as `apikey` and, without a signed-in user, again as
 * the bearer token. Either carrying the secret key makes the request service_role; the
 * publishable key alone makes it anon. A bearer that is neither key is a JWT this
 * devstack cannot verify, and Storage answers an unverifiable JWT with AccessDenied.
 */
export function authorize(c: Context, keys: ApiKeys): Role {
  const role = authorizeIfPresent(c, keys);
  if (!role) throw new GatewayError('No API key found in request');
  return role;
}

/** As authorize, but a request carrying no key at all is let through as unauthenticated (undefined). */
export function authorizeIfPresent(c: Context, keys: ApiKeys): Role | undefined {
  const apikey = c.req.header('apikey') ?? c.req.query('apikey');
  const bearer = bearerOf(c);
  if (!apikey && !bearer) return undefined;

  const isService = (value: string | undefined) => value !== undefined && sameKey(value, keys.serviceRoleKey);
  const isAnon = (value: string | undefined) => value !== undefined && sameKey(value, keys.anonKey);

  if (apikey && !isService(apikey) && !isAnon(apikey)) throw new GatewayError('Invalid API key');
  if (bearer !== undefined && !isService(bearer) && !isAnon(bearer)) {
    throw accessDenied('invalid JWT: the devstack accepts only the project API keys as bearer tokens');
  }
  return isService(apikey) || isService(bearer) ? 'service_role' : 'anon';
}
