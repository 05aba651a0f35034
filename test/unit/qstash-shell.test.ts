import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DISCARD_LIMIT } from '#core/bodies.ts';
import { MAX_QSTASH_BODY_BYTES } from '#core/limits.ts';
import { type Attempt, createQStashWorker, type Ending, RetryLater } from '#core/qstash/worker-shell.ts';
import { signDelivery } from '../../devstack/qstash/signature.ts';
import { countedStream, filler } from '../support/streamed-bodies.ts';

// The shell of both QStash-triggered workers, in process: how much of a body it reads before
// refusing it, and what it tells a handler about its attempt. (Against the workers themselves,
// test/api/qstash-refusals.test.ts and test/api/qstash-retried.test.ts.)
const WORKER_URL = 'http://worker.test';
const KEYS = { currentSigningKey: 'sig_current_unit', nextSigningKey: 'sig_next_unit' };
const handled: { message: unknown; attempt: Attempt }[] = [];
const ended: { message: unknown; ending: Ending }[] = [];
const RETRY_MESSAGE = 'The web page did not respond in time';

const app = createQStashWorker({
  loadConfig: () => ({
    HYPERDRIVE: { connectionString: 'postgres://nobody@127.0.0.1:9/none' },
    QSTASH_URL: 'http://qstash.test',
  }),
  signing: () => ({ workerUrl: WORKER_URL, ...KEYS }),
  deps: () => ({}),
  routes: {
    '/steps': {
      message: z.object({ job_id: z.string() }),
      refusal: 'Not a step',
      handle: async (_deps, message, attempt) => {
        handled.push({ message, attempt });
      },
    },
    '/flaky': {
      message: z.object({ job_id: z.string() }),
      refusal: 'Not a step',
      handle: async () => {
        throw new RetryLater(RETRY_MESSAGE, { cause: new Error('upstream detail that stays in the log') });
      },
    },
  },
  failures: {
    path: '/failures',
    message: z.object({ job_id: z.string() }),
    refusal: 'Not a failure',
    handle: async (_deps, message, ending) => {
      ended.push({ message, ending });
    },
  },
  retryDetail: 'Will be retried',
  name: 'ingest',
});

const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} };

async function post(chunks: Iterable<Uint8Array>, headers: Record<string, string>, path = '/steps') {
  const body = countedStream(chunks);
  const request = new Request(`${WORKER_URL}${path}`, {
    method: 'POST',
    body: body.stream,
    headers,
    duplex: 'half',
  } as RequestInit);
  const response = await app.fetch(request, {}, ctx as never);
  await body.stream.cancel().catch(() => {});
  const answer = (await response.json()) as { detail?: string; final_message?: string };
  return { status: response.status, detail: answer.detail, answer, pulled: body.pulled() };
}

const encode = (value: unknown) => new TextEncoder().encode(typeof value === 'string' ? value : JSON.stringify(value));

/** A delivery to `path` signed as QStash signs it, with any headers besides. */
async function signedPost(path: string, value: unknown, headers: Record<string, string> = {}) {
  const bytes = encode(value);
  const signature = await signDelivery(KEYS.currentSigningKey, `${WORKER_URL}${path}`, bytes);
  return post([bytes], { 'upstash-signature': signature, ...headers }, path);
}

describe('the QStash worker shell', () => {
  it('401 for a POST without a signature, having read nothing of an endless body', async () => {
    expect(await post(filler(), {})).toMatchObject({ status: 401, pulled: 0 });
  });

  it('413 for a declared length over the cap, having read nothing', async () => {
    const headers = { 'upstash-signature': 'a.b.c', 'content-length': String(64 * 1024 * 1024) };
    expect(await post(filler(), headers)).toMatchObject({ status: 413, pulled: 0 });
  });

  it('413 for a body that streams past the cap; the rest is thrown away, not kept, and then given up', async () => {
    const answer = await post(filler(), { 'upstash-signature': 'a.b.c' });
    expect(answer.status).toBe(413);
    expect(answer.pulled).toBeGreaterThan(MAX_QSTASH_BODY_BYTES);
    expect(answer.pulled).toBeLessThanOrEqual(MAX_QSTASH_BODY_BYTES + DISCARD_LIMIT + 2 * 64 * 1024);
  });

  it('a signed message under the cap is delivered; a wrong signature is 401', async () => {
    const bytes = new TextEncoder().encode(JSON.stringify({ job_id: 'j-1' }));
    const signature = await signDelivery(KEYS.currentSigningKey, `${WORKER_URL}/steps`, bytes);
    expect(await post([bytes], { 'upstash-signature': signature })).toMatchObject({ status: 200 });
    expect(handled.map((h) => h.message)).toEqual([{ job_id: 'j-1' }]);
    const forged = await signDelivery('another key', `${WORKER_URL}/steps`, bytes);
    expect(await post([bytes], { 'upstash-signature': forged })).toMatchObject({ status: 401 });
  });

  it('never takes a delivery for the last attempt, whatever its unsigned Upstash-Retried header claims', async () => {
    handled.length = 0;
    for (const retried of ['0', '3', '99', 'not a number']) {
      expect(await signedPost('/steps', { job_id: `j-${retried}` }, { 'upstash-retried': retried })).toMatchObject({
        status: 200,
      });
    }
    expect(handled.map((h) => h.attempt)).toEqual(Array(4).fill({ retried: 0, final: false }));
  });

  it('answers a RetryLater with 500 and its message; the signed failure callback hands that back, with the count', async () => {
    const failed = await signedPost('/flaky', { job_id: 'j-9' }, { 'upstash-retried': '3' });
    expect(failed).toMatchObject({ status: 500, answer: { detail: 'Will be retried', final_message: RETRY_MESSAGE } });
    expect(JSON.stringify(failed.answer)).not.toContain('upstream detail');

    ended.length = 0;
    const base64 = (value: unknown) => Buffer.from(encode(value)).toString('base64');
    // QStash's failure callback: the original message and the last answer, base64, and the retries made.
    const callback = (body: unknown, retried?: number) => ({
      status: 500,
      body: base64(body),
      sourceBody: base64({ job_id: 'j-9' }),
      ...(retried === undefined ? {} : { retried }),
    });
    expect(await signedPost('/failures', callback(failed.answer, 3))).toMatchObject({ status: 200 });
    // An answer that is not one of ours (the runtime's own error page) names nothing.
    expect(await signedPost('/failures', callback('<html>Worker threw exception</html>'))).toMatchObject({ status: 200 });
    expect(ended).toEqual([
      { message: { job_id: 'j-9' }, ending: { attempts: 4, lastFailure: RETRY_MESSAGE } },
      { message: { job_id: 'j-9' }, ending: { attempts: undefined, lastFailure: undefined } },
    ]);
    // Unsigned, the same callback is refused, and nothing is ended.
    const unsigned = await post([encode(callback(failed.answer, 3))], {}, '/failures');
    expect(unsigned.status).toBe(401);
    expect(ended).toHaveLength(2);
  });
});
