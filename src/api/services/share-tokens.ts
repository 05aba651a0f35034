import { randomToken, sha256Hex } from '#core/secrets.ts';

/**
 * Invite link tokens. Only the SHA-256 of a token is stored, so the database cannot hand out
 * working links; a plain hash suffices because the token is 256 random bits (#core/secrets.ts).
 * The migration that hashed the existing tokens computes the same value in SQL.
 */

/** Characters of the token kept in clear so owners can tell links apart: 36 of its 256 bits. */
export const TOKEN_PREFIX_LENGTH = 6;

/** 256 random bits, base64url: unguessable, and safe in a URL path. */
export const newShareToken = (): string => randomToken(32);

/** The stored form: lower-case hex SHA-256 of the token's UTF-8 bytes. */
export const hashShareToken = sha256Hex;
