import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAILURE_PATH, STEP_PATH } from '#core/messages/ingest.ts';
import { signDelivery } from '../../devstack/qstash/signature.ts';
import { db, signUp, stack, type TestUser } from '../support/client.ts';
import { queuedUrlJob } from '../support/ingest.ts';

// QStash signs a delivery's URL and body, never its Upstash-Retried header, so whoever replays a
// captured delivery within its signature's five minutes may set that header to anything. Here the
// real ingest worker gets such deliveries, signed as QStash signs them: an attempt claiming to be
// QStash's last does not end the job; only the signed failure callback does.
// (In process: test/unit/qstash-shell.test.ts. For webhooks: test/api/webhooks.test.ts.)

const DNS_DOWN_MESSAGE = 'The web address’s host name could not be looked up; try again later';

let user: TestUser;
let host: string;
beforeAll(async () => {
  user = await signUp('qstash-retried');
  // The devstack's resolver fails every lookup of this one name (other files are not hit).
  host = `retried-${randomUUID().slice(0, 8)}.example.test`;
  const fault = await fetch(stack.faultsUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ service: 'dns', match: `name=${host}`, status: 503 }),
  });
  expect(fault.ok).toBe(true);
});
afterAll(async () => {
  await fetch(`${stack.faultsUrl}?service=dns&match=${encodeURIComponent(`name=${host}`)}`, { method: 'DELETE' });
});

/** A POST to the ingest worker signed as QStash signs it, with any headers besides. */
async function deliver(path: string, body: unknown, headers: Record<string, string> = {}) {
  const bytes = new TextEncoder().encode(JSON.stringify(body));
  const signature = await signDelivery(stack.qstashSigningKeys.current, `${stack.ingestUrl}${path}`, bytes);
  const response = await fetch(`${stack.ingestUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'upstash-signature': signature, ...headers },
    body: bytes,
  });
  return { status: response.status, text: await response.text() };
}

async function jobRow(jobId: string) {
  const [row] = await db()<{ status: string; error_message: string | null }[]>`
    select status, error_message from ingest_jobs where id = ${jobId}`;
  return row;
}

describe('Upstash-Retried, which no signature covers', () => {
  it('a step failing for a passing reason is retried, whatever count the header claims', async () => {
    const { jobId } = await queuedUrlJob(user.id, `http://${host}/page.html`);
    // 3 is QStash's last retry of a step; before, that made this failure the job's end.
    for (const retried of ['3', '99']) {
      const answer = await deliver(STEP_PATH, { job_id: jobId, step: 'extract' }, { 'upstash-retried': retried });
      expect(answer.status, answer.text).toBe(500);
      // The 500 names how the job ends should this be the last attempt; QStash hands it back, signed.
      expect(JSON.parse(answer.text)).toEqual({ detail: 'Step failed; it will be retried', final_message: DNS_DOWN_MESSAGE });
      expect(await jobRow(jobId)).toMatchObject({ error_message: null });
      expect((await jobRow(jobId))?.status).not.toBe('failed');
    }
  });

  it("the signed failure callback ends the job, with what the last attempt's answer said", async () => {
    const { jobId, documentId } = await queuedUrlJob(user.id, `http://${host}/other.html`);
    const step = { job_id: jobId, step: 'extract' };
    const last = await deliver(STEP_PATH, step);
    expect(last.status).toBe(500);
    const base64 = (text: string) => Buffer.from(text).toString('base64');
    const callback = {
      status: 500,
      body: base64(last.text),
      retried: 3,
      maxRetries: 3,
      sourceBody: base64(JSON.stringify(step)),
    };

    // Unsigned, it is refused and changes nothing.
    const unsigned = await fetch(`${stack.ingestUrl}${FAILURE_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(callback),
    });
    expect(unsigned.status).toBe(401);
    expect((await jobRow(jobId))?.status).not.toBe('failed');

    const ended = await deliver(FAILURE_PATH, callback);
    expect(ended.status, ended.text).toBe(200);
    expect(await jobRow(jobId)).toEqual({ status: 'failed', error_message: DNS_DOWN_MESSAGE });
    // A failed job's document goes with it.
    const [{ count } = { count: -1 }] = await db()<{ count: number }[]>`
      select count(*)::int as count from documents where id = ${documentId}`;
    expect(count).toBe(0);
  });
});
