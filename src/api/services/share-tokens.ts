/**
 * Invite link tokens. Only the SHA-256 of a token is stored, so the database cannot hand out
 * working links; a plain hash suffices because the token is 256 random bits, which nobody can
 * guess or search for. The migration that hashed the existing tokens computes the same value
 * in SQL: `encode(sha256(convert_to(token, 'UTF8')), 'hex')`.
 */

/** Characters of the token kept in clear so owners can tell links apart: 36 of its 256 bits. */
export const TOKEN_PREFIX_LENGTH = 6;

/** 256 random bits, base64url: unguessable, and safe in a URL path. */
export function newShareToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

/** The stored form: lower-case hex SHA-256 of the token's UTF-8 bytes. */
export async function hashShareToken(token: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(token));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}
