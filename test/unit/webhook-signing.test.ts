import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { newWebhookSecret, signatureHeaders, signingKey, standardSignature } from '#core/webhooks/signing.ts';
import { type SeenIds, TOLERANCE_SECONDS, verifyWebhook } from '../../client/webhook-verify.ts';

// The signing half (src/core/webhooks/signing.ts) against the README's verifier
// (client/webhook-verify.ts), in process. Against the real ingest worker: test/api/webhooks.test.ts.

const root = new URL('../../', import.meta.url).pathname;

/** The README's advice in memory: each id accepted once. */
const seenIds = (): SeenIds => {
  const ids = new Set<string>();
  return {
    add(id) {
      if (ids.has(id)) return false;
      ids.add(id);
      return true;
    },
  };
};

// The Standard Webhooks specification's published test vector.
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: '1614265330',
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

const BODY = JSON.stringify({ event: 'ingest.succeeded', job_id: 'j-1', source: 'Résumé — 東京.txt' });
const NOW = Date.UTC(2026, 10, 27, 12, 0, 0);

async function signed(secret: string, id = '6f1c4f40-8a57-4c6e-9a43-3f1c1f9d2b10', now = NOW) {
  return new Headers(await signatureHeaders(secret, { id, body: BODY }, now));
}

describe('signing a delivery', () => {
  it('reproduces the Standard Webhooks test vector, so any of its libraries can verify our deliveries', async () => {
    expect(await standardSignature(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.body)).toBe(VECTOR.signature);
  });

  it('makes secrets as Standard Webhooks libraries read them: whsec_ and the base64 of 32 random bytes', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(signingKey(secret)).toEqual(new Uint8Array(Buffer.from(secret.slice(6), 'base64')));
    expect(signingKey(secret)).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(secret);
  });

  it('signs "id.timestamp.body" with the key the secret encodes, and the body alone in X-Service-Signature', async () => {
    const secret = newWebhookSecret();
    const headers = await signed(secret, 'delivery-1');
    const timestamp = String(NOW / 1000);
    expect(headers.get('webhook-id')).toBe('delivery-1');
    expect(headers.get('webhook-timestamp')).toBe(timestamp);
    const key = Buffer.from(secret.slice(6), 'base64');
    const expected = createHmac('sha256', key).update(`delivery-1.${timestamp}.${BODY}`).digest('base64');
    expect(headers.get('webhook-signature')).toBe(`v1,${expected}`);
    // The contract's header, as before: keyed by the secret's text, over the body only.
    expect(headers.get('x-service-signature')).toBe(`sha256=${createHmac('sha256', secret).update(BODY).digest('hex')}`);
  });

  it('keeps a secret issued before the change (base64url, unpadded) working, in both headers', async () => {
    const bytes = Buffer.from(Array.from({ length: 32 }, (_, i) => (i * 37 + 251) % 256));
    const legacy = `whsec_${bytes.toString('base64url')}`;
    expect(legacy).toMatch(/[-_]/);
    expect(signingKey(legacy)).toEqual(new Uint8Array(bytes));
    const headers = await signed(legacy);
    expect(await verifyWebhook(legacy, headers, BODY, seenIds(), NOW)).toMatchObject({ ok: true });
    expect(headers.get('x-service-signature')).toBe(`sha256=${createHmac('sha256', legacy).update(BODY).digest('hex')}`);
  });
});

describe("the README's verifier", () => {
  it('accepts the Standard Webhooks test vector', async () => {
    const headers = new Headers({
      'webhook-id': VECTOR.id,
      'webhook-timestamp': VECTOR.timestamp,
      'webhook-signature': VECTOR.signature,
    });
    expect(await verifyWebhook(VECTOR.secret, headers, VECTOR.body, seenIds(), Number(VECTOR.timestamp) * 1000)).toEqual({
      ok: true,
      id: VECTOR.id,
      timestamp: Number(VECTOR.timestamp),
    });
  });

  it('accepts a genuine delivery once: the same id again is a replay', async () => {
    const secret = newWebhookSecret();
    const headers = await signed(secret);
    const seen = seenIds();
    expect(await verifyWebhook(secret, headers, BODY, seen, NOW + 1_000)).toMatchObject({ ok: true });
    expect(await verifyWebhook(secret, headers, BODY, seen, NOW + 2_000)).toEqual({ ok: false, reason: 'replayed' });
    // Signed anew for a later attempt (a retry), the id is still the one already handled.
    const retry = await signed(secret, headers.get('webhook-id') as string, NOW + 60_000);
    expect(await verifyWebhook(secret, retry, BODY, seen, NOW + 61_000)).toEqual({ ok: false, reason: 'replayed' });
  });

  it('refuses a timestamp more than 5 minutes old or ahead, whatever the signature', async () => {
    const secret = newWebhookSecret();
    const headers = await signed(secret);
    const limit = TOLERANCE_SECONDS * 1000;
    expect(await verifyWebhook(secret, headers, BODY, seenIds(), NOW + limit)).toMatchObject({ ok: true });
    expect(await verifyWebhook(secret, headers, BODY, seenIds(), NOW + limit + 1_000)).toEqual({
      ok: false,
      reason: 'stale timestamp',
    });
    expect(await verifyWebhook(secret, headers, BODY, seenIds(), NOW - limit - 1_000)).toEqual({
      ok: false,
      reason: 'stale timestamp',
    });
    for (const bad of ['', 'soon', '1.5e9', '-1', '99999999999999']) {
      headers.set('webhook-timestamp', bad);
      expect((await verifyWebhook(secret, headers, BODY, seenIds(), NOW)).ok, bad).toBe(false);
    }
  });

  it('refuses a changed id, timestamp or body, another secret, and a missing header, remembering none of them', async () => {
    const secret = newWebhookSecret();
    const genuine = await signed(secret, 'delivery-7');
    const seen = seenIds();
    const tampered = (name: string, value: string) => {
      const headers = new Headers(genuine);
      headers.set(name, value);
      return headers;
    };
    const refusals = [
      verifyWebhook(secret, tampered('webhook-id', 'delivery-8'), BODY, seen, NOW),
      verifyWebhook(secret, tampered('webhook-timestamp', String(NOW / 1000 + 1)), BODY, seen, NOW),
      verifyWebhook(secret, genuine, BODY.replace('succeeded', 'failed'), seen, NOW),
      verifyWebhook(newWebhookSecret(), genuine, BODY, seen, NOW),
      verifyWebhook(secret, tampered('webhook-signature', 'v1,not-base64!'), BODY, seen, NOW),
      verifyWebhook(secret, tampered('webhook-signature', `v2,${genuine.get('webhook-signature')?.slice(3)}`), BODY, seen, NOW),
    ];
    for (const verdict of await Promise.all(refusals)) expect(verdict).toEqual({ ok: false, reason: 'bad signature' });
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      const headers = new Headers(genuine);
      headers.delete(name);
      expect(await verifyWebhook(secret, headers, BODY, seen, NOW)).toEqual({ ok: false, reason: 'missing headers' });
    }
    // None of those used up the id: the genuine delivery still passes, once.
    expect(await verifyWebhook(secret, genuine, BODY, seen, NOW)).toMatchObject({ ok: true, id: 'delivery-7' });
  });

  it('takes the raw bytes as well as text, and any one valid signature of several', async () => {
    const secret = newWebhookSecret();
    const headers = await signed(secret);
    headers.set('webhook-signature', `v1,${Buffer.alloc(32).toString('base64')} ${headers.get('webhook-signature')}`);
    expect(await verifyWebhook(secret, headers, new TextEncoder().encode(BODY), seenIds(), NOW)).toMatchObject({ ok: true });
  });

  it('is shown whole in the README, as it is in client/webhook-verify.ts', () => {
    const readme = readFileSync(`${root}README.md`, 'utf8');
    const shown = /<!-- client\/webhook-verify\.ts -->\n```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(shown).toBe(readFileSync(`${root}client/webhook-verify.ts`, 'utf8'));
  });
});
