import { hmacSha256Hex } from '../secrets.ts';

/**
 * How a webhook delivery is signed and what a signing secret looks like. The signature follows
 * Standard Webhooks (https://www.standardwebhooks.com/): it covers the delivery's id and the
 * attempt's time as well as the body, so a captured delivery cannot be passed off as a new one
 * later, and a receiver deduplicates by an id nobody can alter. client/webhook-verify.ts is the
 * receiver's half.
 */

export const ID_HEADER = 'webhook-id';
export const TIMESTAMP_HEADER = 'webhook-timestamp';
export const SIGNATURE_HEADER = 'webhook-signature';
/**
 * The interface contract's header: `sha256=<hex HMAC-SHA-256 of the body>` under the secret's text.
 * Still sent for receivers written against it, but it covers the body only: the same body sent again
 * verifies again, so it proves where a delivery came from, not that it is new.
 */
export const BODY_SIGNATURE_HEADER = 'X-Service-Signature';

const encoder = new TextEncoder();
const SECRET_PREFIX = 'whsec_';

const toBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

/** `whsec_` and the standard base64 of 32 random bytes: the form Standard Webhooks libraries read. */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${toBase64(crypto.getRandomValues(new Uint8Array(32)))}`;
}

/**
 * The HMAC key a secret stands for: the bytes its text after `whsec_` encodes. Secrets issued before
 * the Standard Webhooks signature were base64url without padding; read the same way, they give
 * their 32 bytes too, so those registrations keep working unchanged.
 */
export function signingKey(secret: string): Uint8Array<ArrayBuffer> {
  const text = secret
    .slice(secret.startsWith(SECRET_PREFIX) ? SECRET_PREFIX.length : 0)
    .replace(/-/g, '+')
    .replace(/_/g, '/');
  const binary = atob(text.padEnd(Math.ceil(text.length / 4) * 4, '='));
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}

/** `v1,<base64 HMAC-SHA-256 of "id.timestamp.body">` under the secret's key. */
export async function standardSignature(secret: string, id: string, timestamp: string, body: string): Promise<string> {
  const key = await crypto.subtle.importKey('raw', signingKey(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = await crypto.subtle.sign('HMAC', key, encoder.encode(`${id}.${timestamp}.${body}`));
  return `v1,${toBase64(new Uint8Array(mac))}`;
}

/** `sha256=<hex>`: the contract's body-only signature, keyed by the secret's text as it was shown. */
export const bodySignature = async (secret: string, body: string) => `sha256=${await hmacSha256Hex(secret, body)}`;

/**
 * The signature headers of one attempt. The timestamp is the attempt's own (a retry is signed anew),
 * while the id is the delivery's and stays the same on every retry.
 */
export async function signatureHeaders(
  secret: string,
  delivery: { id: string; body: string },
  now = Date.now(),
): Promise<Record<string, string>> {
  const timestamp = String(Math.floor(now / 1000));
  return {
    [ID_HEADER]: delivery.id,
    [TIMESTAMP_HEADER]: timestamp,
    [SIGNATURE_HEADER]: await standardSignature(secret, delivery.id, timestamp, delivery.body),
    [BODY_SIGNATURE_HEADER]: await bodySignature(secret, delivery.body),
  };
}
