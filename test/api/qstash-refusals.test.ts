import { describe, expect, it } from 'vitest';
import { MAX_QSTASH_BODY_BYTES } from '#core/limits.ts';
import { signDelivery } from '../../devstack/qstash/signature.ts';
import { stack } from '../support/client.ts';
import { filler, streamedPost } from '../support/streamed-bodies.ts';

// Both QStash-triggered workers share one shell: a POST without a signature, or with a body
// larger than any QStash message, is refused without keeping its body. (That no byte of it is
// read is shown in process, test/unit/qstash-shell.test.ts: wrangler dev drains every unread
// body before the answer goes out.)
const HUGE = 64 * 1024 * 1024;

const workers = [
  { name: 'ingest', url: () => `${stack.ingestUrl}/steps`, failures: () => `${stack.ingestUrl}/failures` },
  { name: 'scoring', url: () => `${stack.scoringUrl}/score`, failures: () => `${stack.scoringUrl}/failures` },
];

const json = { 'content-type': 'application/json' };
const sign = (url: string, body: Uint8Array) => signDelivery(stack.qstashSigningKeys.current, url, body);

describe.each(workers)('the $name worker', ({ name, url, failures }) => {
  it('401 for an unsigned POST of 64 MB', async () => {
    const answer = await streamedPost(url(), { ...json, 'content-length': String(HUGE) }, filler(HUGE), 120_000);
    expect(answer.status).toBe(401);
    expect(answer.body.detail).toBe('Invalid or missing QStash signature');
    console.info(`${name}: unsigned 64 MB POST answered 401 after ${Math.round(answer.ms)} ms`);
  });

  it('401 for an unsigned chunked POST, to the steps and to the failure callback', async () => {
    for (const target of [url(), failures()]) {
      const answer = await streamedPost(target, json, filler(8 * 1024 * 1024));
      expect(answer.status).toBe(401);
    }
  });

  it('413 for a signed POST declaring more than the cap', async () => {
    const answer = await streamedPost(
      url(),
      { ...json, 'upstash-signature': await sign(url(), new Uint8Array()), 'content-length': String(MAX_QSTASH_BODY_BYTES + 1) },
      filler(MAX_QSTASH_BODY_BYTES + 1),
    );
    expect(answer.status).toBe(413);
    expect(answer.body.detail).toBe('A QStash delivery holds at most 256 KB');
  });

  it('413 for a signed chunked POST once it streams past the cap', async () => {
    const signature = await sign(url(), new Uint8Array());
    const answer = await streamedPost(url(), { ...json, 'upstash-signature': signature }, filler(1024 * 1024));
    expect(answer.status).toBe(413);
  });

  it('reads a signed body under the cap as before: not a message is 400, not 413', async () => {
    const body = new Uint8Array(MAX_QSTASH_BODY_BYTES - 1024).fill(0x20);
    body.set(new TextEncoder().encode('"padding"'));
    const answer = await streamedPost(url(), { ...json, 'upstash-signature': await sign(url(), body) }, [body]);
    expect(answer.status).toBe(400);
  });
});
