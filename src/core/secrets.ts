/**
 * Random secrets and their digests, on WebCrypto so that every worker (and the tests, in Node) computes
 * the same values. Tokens, keys and webhook secrets are 256 random bits: a plain SHA-256 of one cannot
 * be reversed or searched for, so no salt or slow hash is needed to store it.
 */

const encoder = new TextEncoder();

/** `bytes` random bytes, base64url without padding: safe in a URL path and a header. */
export function randomToken(bytes = 32): string {
  const random = crypto.getRandomValues(new Uint8Array(bytes));
  return btoa(String.fromCharCode(...random))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

const hex = (buffer: ArrayBuffer) => [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, '0')).join('');

/** Lower-case hex SHA-256 of the text's UTF-8 bytes; SQL computes the same with `encode(sha256(convert_to(t, 'UTF8')), 'hex')`. */
export async function sha256Hex(text: string): Promise<string> {
  return hex(await crypto.subtle.digest('SHA-256', encoder.encode(text)));
}

/** Lower-case hex HMAC-SHA-256 of `message` under `secret`, both as UTF-8. */
export async function hmacSha256Hex(secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return hex(await crypto.subtle.sign('HMAC', key, encoder.encode(message)));
}
