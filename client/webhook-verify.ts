/**
 * Checks a webhook delivery as a receiver should, before acting on it: the Standard Webhooks
 * signature (`webhook-signature: v1,<base64 HMAC-SHA-256 of "<webhook-id>.<webhook-timestamp>.<raw body>">`
 * under the bytes the `whsec_` secret encodes), a timestamp within 5 minutes of now either way, and
 * each signed id accepted once. WebCrypto only: Node 20+, Deno, Bun, Workers and browsers alike.
 */

/** The age, either way, past which a delivery is refused: a captured one cannot be replayed later. */
export const TOLERANCE_SECONDS = 5 * 60;

/**
 * Ids seen already. `add` records one and answers false if it was there: make it atomic (Redis
 * `SET <id> 1 NX EX 172800`, a unique key in SQL) and keep ids for two days, as long as retries go on.
 */
export interface SeenIds {
  add(id: string): boolean | Promise<boolean>;
}

export type Verdict =
  | { ok: true; id: string; timestamp: number }
  | { ok: false; reason: 'missing headers' | 'stale timestamp' | 'bad signature' | 'replayed' };

const encoder = new TextEncoder();

/** base64 or base64url, padded or not, to bytes; null when it is neither. */
function fromBase64(text: string): Uint8Array<ArrayBuffer> | null {
  const standard = text.replace(/-/g, '+').replace(/_/g, '/');
  try {
    const binary = atob(standard.padEnd(Math.ceil(standard.length / 4) * 4, '='));
    return Uint8Array.from(binary, (char) => char.charCodeAt(0));
  } catch {
    return null;
  }
}

export async function verifyWebhook(
  secret: string,
  headers: { get(name: string): string | null },
  rawBody: string | Uint8Array,
  seen: SeenIds,
  now = Date.now(),
): Promise<Verdict> {
  const id = headers.get('webhook-id');
  const timestamp = headers.get('webhook-timestamp');
  const signatures = headers.get('webhook-signature');
  if (!id || !timestamp || !signatures) return { ok: false, reason: 'missing headers' };
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(now / 1000 - Number(timestamp)) > TOLERANCE_SECONDS) {
    return { ok: false, reason: 'stale timestamp' };
  }

  const keyBytes = fromBase64(secret.replace(/^whsec_/, ''));
  if (!keyBytes) throw new Error('The webhook secret is not whsec_ followed by base64');
  const key = await crypto.subtle.importKey('raw', keyBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  const body = typeof rawBody === 'string' ? encoder.encode(rawBody) : rawBody;
  const prefix = encoder.encode(`${id}.${timestamp}.`);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix);
  signed.set(body, prefix.length);

  let valid = false;
  // Several signatures may be listed, space-separated; any v1 one that verifies will do.
  for (const entry of signatures.split(' ')) {
    const [version, value] = entry.split(',');
    const mac = version === 'v1' && value ? fromBase64(value) : null;
    // crypto.subtle.verify compares in constant time.
    if (mac && (await crypto.subtle.verify('HMAC', key, mac, signed))) valid = true;
  }
  if (!valid) return { ok: false, reason: 'bad signature' };
  // Only a genuine delivery is remembered, so forged requests cannot use up ids.
  if (!(await seen.add(id))) return { ok: false, reason: 'replayed' };
  return { ok: true, id, timestamp: Number(timestamp) };
}
