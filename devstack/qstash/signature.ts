import { createHash } from 'node:crypto';
import { SignJWT } from 'jose';
import { newJwtId } from './ids.ts';

const LIFETIME_SECONDS = 300;

/**
 * The Upstash-Signature JWT as QStash documents it: HS256 with the current signing
 * key (its UTF-8 bytes), claims iss "Upstash", sub the destination URL, iat = nbf,
 * exp five minutes on, a jti, and body = base64url (padded, as QStash sends it) of
 * the SHA-256 of the exact bytes delivered.
 */
export async function signDelivery(signingKey: string, url: string, body: Uint8Array, now = Date.now()): Promise<string> {
  const issuedAt = Math.floor(now / 1000);
  const bodyHash = createHash('sha256').update(body).digest('base64').replace(/\+/g, '-').replace(/\//g, '_');
  return new SignJWT({
    iss: 'Upstash',
    sub: url,
    exp: issuedAt + LIFETIME_SECONDS,
    nbf: issuedAt,
    iat: issuedAt,
    jti: newJwtId(),
    body: bodyHash,
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .sign(new TextEncoder().encode(signingKey));
}
