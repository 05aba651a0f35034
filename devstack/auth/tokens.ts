import { errors, importJWK, type JWK, type JWTPayload, jwtVerify, SignJWT } from 'jose';
import type { UserRow } from './users.ts';

export interface AccessTokenClaims extends JWTPayload {
  sub: string;
  session_id?: string;
  role?: string;
}

type Key = Awaited<ReturnType<typeof importJWK>>;

export interface TokenSigner {
  /** The public half as the JWKS endpoint publishes it. */
  readonly publicJwk: JWK;
  sign(claims: Record<string, unknown>): Promise<string>;
  /** Resolves to the claims, or rejects with a message in the words of GoTrue's JWT library. */
  verify(token: string): Promise<AccessTokenClaims>;
}

export function createTokenSigner(privateJwk: JWK): TokenSigner {
  const { kty, crv, x, y, d, kid } = privateJwk;
  if (kty !== 'EC' || crv !== 'P-256' || !d || !x || !y) {
    throw new Error('privateJwk must be a private EC P-256 JWK (kty EC, crv P-256, with d, x and y)');
  }
  if (!kid) throw new Error('privateJwk needs a kid: tokens name it and the JWKS publishes it');

  const publicJwk: JWK = { kty, crv, x, y, kid, alg: 'ES256', use: 'sig', key_ops: ['verify'] };
  // Imported on first use because key import is async and createAuthServer is not.
  let privateKey: Promise<Key> | undefined;
  let publicKey: Promise<Key> | undefined;

  return {
    publicJwk,
    async sign(claims) {
      privateKey ??= importJWK({ kty, crv, x, y, d }, 'ES256');
      return new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' }).sign(await privateKey);
    },
    async verify(token) {
      publicKey ??= importJWK({ kty, crv, x, y }, 'ES256');
      try {
        const { payload } = await jwtVerify(token, await publicKey, { algorithms: ['ES256'] });
        return payload as AccessTokenClaims;
      } catch (error) {
        throw new Error(describeJwtFailure(error));
      }
    },
  };
}

function describeJwtFailure(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'token has invalid claims: token is expired';
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return 'token signature is invalid: crypto/ecdsa: verification error';
  if (error instanceof errors.JWTClaimValidationFailed) return `token has invalid claims: ${error.message}`;
  if (error instanceof errors.JOSEAlgNotAllowed) return 'token is unverifiable: signing method is invalid';
  return 'token is malformed: could not parse the token';
}

export interface SessionInfo {
  id: string;
  /** When the user authenticated, for the amr claim. */
  createdAt: Date;
}

/** The claim set of GoTrue's AccessTokenClaims, in its order. */
export function accessTokenClaims(
  user: UserRow,
  session: SessionInfo,
  issuer: string,
  issuedAt: number,
  lifetimeSeconds: number,
): Record<string, unknown> {
  return {
    iss: issuer,
    sub: user.id,
    aud: user.aud,
    exp: issuedAt + lifetimeSeconds,
    iat: issuedAt,
    email: user.email ?? '',
    phone: '',
    app_metadata: user.raw_app_meta_data,
    user_metadata: user.raw_user_meta_data,
    role: user.role,
    aal: 'aal1',
    amr: [{ method: 'password', timestamp: Math.floor(session.createdAt.getTime() / 1000) }],
    session_id: session.id,
    is_anonymous: user.is_anonymous,
  };
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** GoTrue's refresh tokens are 12 random lower-case alphanumerics; clients treat them as opaque. */
export function newRefreshToken(length = 12): string {
  let out = '';
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      // 252 is the largest multiple of 36 below 256; rejecting above it keeps every character equally likely.
      if (byte < 252 && out.length < length) out += ALPHABET[byte % ALPHABET.length];
    }
  }
  return out;
}
