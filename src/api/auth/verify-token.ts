import { errors, type JWTPayload, jwtVerify } from 'jose';
import { DomainError } from '#core/errors.ts';
import type { Caller } from './caller.ts';
import { type Background, type JwksSettings, jwksCacheFor } from './jwks-cache.ts';

// Headers that point at other keys. Keys come only from our cache, but a token that
// carries them is not one our provider issues.
const FOREIGN_KEY_HEADERS = ['jku', 'x5u', 'jwk', 'x5c'] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface VerifyOptions {
  jwksUrl: string;
  jwks: JwksSettings;
  issuer?: string;
  clockToleranceSeconds: number;
  /** Where a background key refresh runs (the worker's waitUntil). */
  background: Background;
}

export async function verifyAccessToken(token: string, options: VerifyOptions): Promise<Caller> {
  const keys = jwksCacheFor(options.jwksUrl, options.jwks);
  let payload: JWTPayload;
  try {
    const result = await jwtVerify(token, (header, jws) => keys.key(header, jws, options.background), {
      algorithms: ['ES256'],
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
