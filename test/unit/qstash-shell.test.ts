import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DISCARD_LIMIT } from '#core/bodies.ts';
import { MAX_QSTASH_BODY_BYTES } from '#core/limits.ts';
import { createQStashWorker } from '#core/qstash/worker-shell.ts';
import { signDelivery } from '../../devstack/qstash/signature.ts';
import { countedStream, filler } from '../support/streamed-bodies.ts';

// The shell of both QStash-triggered workers, in process: how much of a body it reads before
// refusing it. (Against the workers themselves, test/api/qstash-refusals.test.ts.)
const WORKER_URL = 'http://worker.test';
const KEYS = { currentSigningKey: 'sig_current_unit', nextSigningKey: 'sig_next_unit' };
const handled: unknown[] = [];

const app = createQStashWorker({
  loadConfig: () => ({ HYPERDRIVE: { connectionString: 'postgres://nobody@127.0.0.1:9/none' } }),
  signing: () => ({ workerUrl: WORKER_URL, ...KEYS }),
  deps: () => ({}),
  routes: {
    '/steps': {
      message: z.object({ job_id: z.string() }),
      refusal: 'Not a step',
      retries: 3,
      handle: async (_deps, message) => {
        handled.push(message);
      },
    },
  },
  failures: { path: '/failures', message: z.object({ job_id: z.string() }), refusal: 'Not a failure', handle: async () => {} },
  retryDetail: 'Will be retried',
  logLabel: 'unit:',
});

const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} };

async function post(chunks: Iterable<Uint8Array>, headers: Record<string, string>) {
  const body = countedStream(chunks);
  const request = new Request(`${WORKER_URL}/steps`, {
    method: 'POST',
    body: body.stream,
    headers,
    duplex: 'half',
  } as RequestInit);
  const response = await app.fetch(request, {}, ctx as never);
  await body.stream.cancel().catch(() => {});
  return { status: response.status, detail: ((await response.json()) as { detail?: string }).detail, pulled: body.pulled() };
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
    expect(handled).toEqual([{ job_id: 'j-1' }]);
    const forged = await signDelivery('another key', `${WORKER_URL}/steps`, bytes);
    expect(await post([bytes], { 'upstash-signature': forged })).toMatchObject({ status: 401 });
  });
});
