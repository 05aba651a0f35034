import { createRemoteJWKSet, customFetch, errors, type JWTPayload, jwtVerify } from 'jose';
import { DomainError, unavailable } from '#core/errors.ts';
import type { Caller } from './caller.ts';

type RemoteJwks = ReturnType<typeof createRemoteJWKSet>;

class JwksUnavailable extends Error {}

// One key set per isolate and URL: jose caches the keys and refetches at most once
// per cooldown when a token names a kid it has not seen (key rotation).
const keySets = new Map<string, RemoteJwks>();

function keySetFor(url: string): RemoteJwks {
  let keySet = keySets.get(url);
  if (!keySet) {
    keySet = createRemoteJWKSet(new URL(url), {
      timeoutDuration: 5_000,
      cooldownDuration: 30_000,
      cacheMaxAge: 10 * 60_000,
      [customFetch]: async (input, init) => {
        let response: Response;
        try {
          response = await fetch(input, init);
        } catch {
          throw new JwksUnavailable();
        }
        if (!response.ok) throw new JwksUnavailable();
        return response;
      },
    });
    keySets.set(url, keySet);
  }
  return keySet;
}

// Headers that point at other keys. jose never follows them with a remote key
// set, but a token that carries them is not one our provider issues.
const FOREIGN_KEY_HEADERS = ['jku', 'x5u', 'jwk', 'x5c'] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface VerifyOptions {
  jwksUrl: string;
  issuer?: string;
  clockToleranceSeconds: number;
}

export async function verifyAccessToken(token: string, options: VerifyOptions): Promise<Caller> {
  const keySet = keySetFor(options.jwksUrl);
  let payload: JWTPayload;
  try {
    const result = await jwtVerify(token, keySet, {
      algorithms: ['ES256'],
      audience: 'authenticated',
      issuer: options.issuer,
      requiredClaims: ['exp', 'sub'],
      clockTolerance: options.clockToleranceSeconds,
    });
    if (FOREIGN_KEY_HEADERS.some((name) => name in result.protectedHeader)) throw invalidToken();
    payload = result.payload;
  } catch (error) {
    if (error instanceof DomainError) throw error;
    if (error instanceof errors.JWTExpired) throw new DomainError('token_expired', 'Token expired');
    // With keys cached, an unreachable provider only means the kid is unknown.
    if ((error instanceof JwksUnavailable || error instanceof errors.JWKSTimeout) && !keySet.jwks()) {
      throw unavailable('Authentication is temporarily unavailable: the identity provider cannot be reached');
    }
    throw invalidToken();
  }

  if (typeof payload.sub !== 'string' || !UUID.test(payload.sub)) throw invalidToken();
  const appMetadata = isRecord(payload.app_metadata) ? payload.app_metadata : {};
  return {
    id: payload.sub.toLowerCase(),
    email: typeof payload.email === 'string' ? payload.email : null,
    isAdmin: Boolean(appMetadata.is_admin),
  };
}

const invalidToken = () => new DomainError('invalid_token', 'Invalid token');

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
