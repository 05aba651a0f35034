import { errors, type JWTPayload, jwtVerify } from 'jose';
import type { Caller } from '#core/caller.ts';
import { DomainError, forbidden } from '#core/errors.ts';
import { type Background, type JwksSettings, jwksCacheFor } from './jwks-cache.ts';

// Headers that point at other keys. Keys come only from our cache, but a token that
// carries them is not one our provider issues.
const FOREIGN_KEY_HEADERS = ['jku', 'x5u', 'jwk', 'x5c'] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The signatures accepted, and no other: Supabase signs with ES256 or RS256 once a project uses
 * asymmetric keys. HS256 (a shared secret, which would also make a public key usable as one) and
 * `none` are refused before any key is looked up, as is every algorithm not named here.
 */
export const TOKEN_ALGORITHMS = ['ES256', 'RS256'] as const;

export interface VerifyOptions {
  jwksUrl: string;
  jwks: JwksSettings;
  /** The `iss` every token must carry. */
  issuer: string;
  /** Supabase's anonymous sign-ins (`is_anonymous: true`): refused (403) unless this is set. */
  allowAnonymous: boolean;
  clockToleranceSeconds: number;
  /** Where a background key refresh runs (the worker's waitUntil). */
  background: Background;
}

export async function verifyAccessToken(token: string, options: VerifyOptions): Promise<Caller> {
  const keys = jwksCacheFor(options.jwksUrl, options.jwks);
  let payload: JWTPayload;
  try {
    const result = await jwtVerify(token, (header, jws) => keys.key(header, jws, options.background), {
      algorithms: [...TOKEN_ALGORITHMS],
      audience: 'authenticated',
      issuer: options.issuer,
      requiredClaims: ['exp', 'sub'],
      clockTolerance: options.clockToleranceSeconds,
    });
    if (FOREIGN_KEY_HEADERS.some((name) => name in result.protectedHeader)) throw invalidToken();
    payload = result.payload;
  } catch (error) {
    // The key cache's 503 when the provider cannot be reached, or our own 401.
    if (error instanceof DomainError) throw error;
    if (error instanceof errors.JWTExpired) throw new DomainError('token_expired', 'Token expired');
    throw invalidToken();
  }

  if (typeof payload.sub !== 'string' || !UUID.test(payload.sub)) throw invalidToken();
  // A genuine token, but for a visitor who never signed up: the boolean alone, as for is_admin.
  if (payload.is_anonymous === true && !options.allowAnonymous) {
    throw forbidden('Anonymous sign-ins cannot use this service: sign in with an email address');
  }
  const appMetadata = isRecord(payload.app_metadata) ? payload.app_metadata : {};
  return {
    id: payload.sub.toLowerCase(),
    email: typeof payload.email === 'string' ? payload.email : null,
    // Only the boolean: the strings "false" and "true", or 1, are not an operator grant.
    isAdmin: appMetadata.is_admin === true,
    key: null,
  };
}

const invalidToken = () => new DomainError('invalid_token', 'Invalid token');

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
