import { jwtVerify, SignJWT } from 'jose';
import { invalidJwt, invalidSignature } from './errors.ts';

export interface UrlSigner {
  /** A token granting a download of `bucketId/key` for expiresIn seconds. */
  sign(objectPath: string, expiresIn: number): Promise<string>;
  /** Checks signature, expiry and that the token was issued for exactly this path. */
  verify(token: string, objectPath: string): Promise<void>;
}

/**
 * Signed URL tokens as Storage makes them: an HS256 JWT over {url: "<bucket>/<key>"},
 * with iat and exp. Errors carry jose's own messages, which is what Storage returns
 * since it verifies with jose too (e.g. `"exp" claim timestamp check failed`).
 */
export function createUrlSigner(secret: string, now: () => number): UrlSigner {
  const key = new TextEncoder().encode(secret);
  return {
    sign(objectPath, expiresIn) {
      const issuedAt = Math.floor(now() / 1000);
      return new SignJWT({ url: objectPath })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuedAt(issuedAt)
        .setExpirationTime(issuedAt + expiresIn)
        .sign(key);
    },

    async verify(token, objectPath) {
      let url: unknown;
      try {
        const { payload } = await jwtVerify(token, key, {
          algorithms: ['HS256'],
          requiredClaims: ['exp'],
          currentDate: new Date(now()),
        });
        url = payload.url;
        // An upload token (it carries upsert) must not be replayable as a download.
        if ('upsert' in payload) throw new Error('token is not valid for downloads');
      } catch (error) {
        throw invalidJwt(error instanceof Error ? error.message : 'Invalid JWT');
      }
      if (url !== objectPath) throw invalidSignature();
    },
  };
}
