import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAILY_INGEST_CHUNKS } from '#core/limits.ts';
import { WEBHOOK_PATH } from '#core/messages/webhooks.ts';
import { WEBHOOK_RETRIES } from '#core/webhooks/queue.ts';
import { type SeenIds, TOLERANCE_SECONDS, verifyWebhook } from '../../client/webhook-verify.ts';
import { signDelivery } from '../../devstack/qstash/signature.ts';
import { api, db, type Method, problems, type Schema, signUp, stack, type TestUser } from '../support/client.ts';
import { fixture } from '../support/documents.ts';
import { queuedUrlJob, upload, waitForJob } from '../support/ingest.ts';
import { type ReceivedRequest, startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * Ingestion webhooks end to end: registrations through the API, deliveries made by the real ingest
 * worker through the devstack's QStash (fast retries: 150·2^n ms) to a real HTTP receiver on
 * `stack.receiverUrl`, a loopback origin in WEBHOOK_TRUSTED_ORIGINS. The test pages' origin
 * (`stack.pagesUrl`) is in INGEST_TRUSTED_ORIGINS only, so no webhook may be sent there.
 */

const ALL_EVENTS = ['ingest.succeeded', 'ingest.failed', 'ingest.partial'];
const PAYLOAD_FIELDS = [
  'chunks_total',
  'collection_id',
  'document_id',
  'error_message',
  'event',
  'job_id',
  'occurred_at',
  'source',
];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

type Delivery = Schema<'WebhookDelivery'>;

let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
});

afterAll(async () => {
  await receiver?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A promise the test settles when it chooses: the receiver holds an answer until then. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** Polls `probe` until it returns something other than undefined; throws with `what` after the deadline. */
async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(150);
  }
}

/** A path of its own on the receiver for each registration. */
const hookPath = (name: string) => `/hooks/${name}-${randomUUID().slice(0, 8)}`;

async function register(user: TestUser, path: string, options: { events?: string[]; collectionId?: string } = {}) {
  const response = await api('POST', '/webhooks/', {
    token: user.token,
    body: {
      url: receiver.url(path),
      events: options.events ?? ALL_EVENTS,
      ...(options.collectionId ? { collection_id: options.collectionId } : {}),
    },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
}

async function deliveriesOf(user: TestUser, hookId: string) {
  const response = await api('GET', `/webhooks/${hookId}/deliveries`, { token: user.token });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
}

/** The hook's delivery for a job, once `ready` says it is what the test waits for. */
async function deliveryFor(
  user: TestUser,
  hookId: string,
  jobId: string,
  ready: (delivery: Delivery) => boolean,
  timeoutMs = 45_000,
): Promise<Delivery> {
  let last: Delivery | undefined;
  try {
    return await until(
      `the delivery of job ${jobId} to webhook ${hookId}`,
      async () => {
        last = (await deliveriesOf(user, hookId)).find((delivery) => delivery.job_id === jobId);
        return last && ready(last) ? last : undefined;
      },
      timeoutMs,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}; last seen: ${JSON.stringify(last)}`);
  }
}

const payloadOf = (request: ReceivedRequest) => JSON.parse(request.body.toString('utf8'));

/** The requests that reached `path` for this job. */
const requestsFor = (path: string, jobId: string) => receiver.requests(path).filter((r) => payloadOf(r).job_id === jobId);

const waitForRequestsFor = (path: string, jobId: string, count = 1, timeoutMs = 45_000) =>
  until(
    `${count} request(s) to ${path} for job ${jobId}`,
    () => {
      const seen = requestsFor(path, jobId);
      return seen.length >= count ? seen : undefined;
    },
    timeoutMs,
  );

/** The README's advice in memory: each id accepted once. */
function seenIds(): SeenIds {
  const ids = new Set<string>();
  return {
    add(id) {
      if (ids.has(id)) return false;
      ids.add(id);
      return true;
    },
  };
}

/** The README's verifier on a request as it reached the receiver, at the time it arrived unless told. */
const verify = (request: ReceivedRequest, secret: string, seen = seenIds(), now = request.receivedAt) =>
  verifyWebhook(secret, new Headers(request.headers), request.body, seen, now);

/**
 * Checks both signatures as a receiver would: the README's verifier (Standard Webhooks: id, timestamp and
 * body), and the contract's `X-Service-Signature`, the HMAC of the raw bytes under the secret's text.
 */
async function expectSigned(request: ReceivedRequest, secret: string) {
  expect(await verify(request, secret)).toEqual({
    ok: true,
    id: request.headers['webhook-id'],
    timestamp: Number(request.headers['webhook-timestamp']),
  });
  expect(request.headers['webhook-id']).toBe(request.headers['x-service-delivery']);
  const expected = `sha256=${createHmac('sha256', secret).update(request.body).digest('hex')}`;
  expect(request.headers['x-service-signature']).toBe(expected);
}

/** A text document whose bytes no other upload shares (so it is never a duplicate unless meant to be). */
const uniqueText = (label: string) =>
  `${label} ${randomUUID()}.\nA short note about webhook receivers, signatures and retries, for the test of deliveries.\n`;

async function uploadAndWait(user: TestUser, name: string, content: Uint8Array | string, collectionId?: string) {
  const created = await upload(user.token, name, content, collectionId);
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return waitForJob(user.token, created.body.job_id);
}

async function createCollection(user: TestUser, name: string): Promise<string> {
  const created = await api('POST', '/collections/', { token: user.token, body: { name } });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.id as string;
}

async function jobRow(jobId: string) {
  const [row] = await db()<{ status: string; updated_at: Date }[]>`
    select status, updated_at from ingest_jobs where id = ${jobId}`;
  return row;
}

describe('registration', () => {
  it('answers the registration with its secret once; the list never shows it', async () => {
    const user = await signUp('hooks-register');
    const path = hookPath('register');
    const response = await api('POST', '/webhooks/', {
      token: user.token,
      body: { url: receiver.url(path), events: ['ingest.succeeded', 'ingest.failed'] },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const hook = response.body;
    expect(Object.keys(hook)).toEqual(
      expect.arrayContaining(['id', 'url', 'events', 'collection_id', 'active', 'created_at', 'secret']),
    );
    expect(hook).toMatchObject({
      id: expect.stringMatching(UUID),
      url: receiver.url(path),
      events: ['ingest.succeeded', 'ingest.failed'],
      collection_id: null,
      active: true,
    });
    expect(Number.isNaN(Date.parse(hook.created_at))).toBe(false);
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    // Another registration gets another secret.
    const other = await register(user, hookPath('register-2'));
    expect(other.secret).not.toBe(hook.secret);

    const listed = await api('GET', '/webhooks/', { token: user.token });
    expect(listed.status).toBe(200);
    expect(listed.body.map((h) => h.id)).toEqual([other.id, hook.id]);
    expect(listed.body[1]).toMatchObject({ id: hook.id, url: hook.url, events: hook.events, active: true });
    for (const listedHook of listed.body) expect(listedHook).not.toHaveProperty('secret');
    const text = JSON.stringify(listed.body);
    expect(text).not.toContain(hook.secret);
    expect(text).not.toContain(other.secret);
    expect(text).not.toContain('whsec_');

    // A change answers the registration without its secret too.
    const patched = await api('PATCH', `/webhooks/${hook.id}`, { token: user.token, body: { events: ['ingest.partial'] } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id: hook.id, events: ['ingest.partial'] });
    expect(JSON.stringify(patched.body)).not.toContain('whsec_');
  });

  it('422 with a reason for a URL the address policy refuses, a scheme other than http(s), and bad event lists', async () => {
    const user = await signUp('hooks-refused');
    const good = receiver.url(hookPath('refused'));
    const refusedUrls: [string, RegExp][] = [
      ['http://127.0.0.1/hook', /private|reserved/i],
      ['http://127.0.0.1:1/hook', /port/i],
      ['http://localhost/hook', /local|internal/i],
      ['http://10.0.0.1/hook', /private|reserved/i],
      ['http://192.168.1.1/hook', /private|reserved/i],
      ['http://169.254.169.254/latest/meta-data/', /private|reserved/i],
      ['http://[::1]/hook', /private|reserved/i],
      ['http://rebind.example.test/hook', /private|reserved/i],
      ['ftp://example.com/hook', /http and https/i],
      ['file:///etc/passwd', /http and https/i],
      ['javascript:alert(1)', /http and https/i],
      ['not a url', /not valid/i],
    ];
    for (const [url, reason] of refusedUrls) {
      const response = await api('POST', '/webhooks/', { token: user.token, body: { url, events: ALL_EVENTS } });
      expect(response.status, `${url}: ${JSON.stringify(response.body)}`).toBe(422);
      expect(problems(response)[0], url).toMatchObject({ loc: ['body', 'url'], msg: expect.stringMatching(reason) });
    }
    const badEvents: unknown[] = [[], ['ingest.started'], ['ingest.succeeded', 'job.done'], 'ingest.succeeded'];
    for (const events of badEvents) {
      const response = await api('POST', '/webhooks/', { token: user.token, body: { url: good, events } });
      expect(response.status, `${JSON.stringify(events)}: ${JSON.stringify(response.body)}`).toBe(422);
      expect(problems(response)[0]?.loc.slice(0, 2), JSON.stringify(events)).toEqual(['body', 'events']);
      expect(problems(response)[0]?.msg).toEqual(expect.any(String));
      expect(problems(response)[0]?.msg.length).toBeGreaterThan(0);
    }
    // Nothing was registered; a change to a refused URL is refused the same way.
    expect((await api('GET', '/webhooks/', { token: user.token })).body).toEqual([]);
    const hook = await register(user, hookPath('refused-patch'));
    const patched = await api('PATCH', `/webhooks/${hook.id}`, {
      token: user.token,
      body: { url: 'http://10.0.0.1/hook' },
    });
    expect(patched.status).toBe(422);
    expect(problems(patched)[0]).toMatchObject({ loc: ['body', 'url'], msg: expect.stringMatching(/private|reserved/i) });
    const emptied = await api('PATCH', `/webhooks/${hook.id}`, { token: user.token, body: { events: [] } });
    expect(emptied.status).toBe(422);
    const [listed] = (await api('GET', '/webhooks/', { token: user.token })).body;
    expect(listed).toMatchObject({ url: hook.url, events: ALL_EVENTS });
  });

  it('422 for a URL on an origin trusted for URL ingestion only, which URL ingestion still reads', async () => {
    const user = await signUp('hooks-ingest-origin');
    const refusal = /trusted for URL ingestion only/;
    for (const url of [`${stack.pagesUrl}/hook`, `${stack.pagesUrl}/`, `${stack.pagesUrl}/admin/reset?all=1`]) {
      const response = await api('POST', '/webhooks/', { token: user.token, body: { url, events: ALL_EVENTS } });
      expect(response.status, `${url}: ${JSON.stringify(response.body)}`).toBe(422);
      expect(problems(response)[0], url).toMatchObject({ loc: ['body', 'url'], msg: expect.stringMatching(refusal) });
    }
    expect((await api('GET', '/webhooks/', { token: user.token })).body).toEqual([]);
    // Nor can a registration be moved there.
    const hook = await register(user, hookPath('ingest-origin'));
    const moved = await api('PATCH', `/webhooks/${hook.id}`, { token: user.token, body: { url: `${stack.pagesUrl}/hook` } });
    expect(moved.status).toBe(422);
    expect(problems(moved)[0]).toMatchObject({ loc: ['body', 'url'], msg: expect.stringMatching(refusal) });
    expect((await api('GET', '/webhooks/', { token: user.token })).body).toEqual([
      expect.objectContaining({ id: hook.id, url: hook.url }),
    ]);
    // The same origin is still trusted for what it is trusted for: reading a page into a collection.
    const ingested = await api('POST', '/ingest/url', { token: user.token, body: { url: `${stack.pagesUrl}/article.html` } });
    expect(ingested.status, JSON.stringify(ingested.body)).toBe(200);
  });

  it('collection_id: 403 for a collection the caller cannot use, 404 for one that does not exist', async () => {
    const [owner, stranger] = await Promise.all([signUp('hooks-col-owner'), signUp('hooks-col-stranger')]);
    const collectionId = await createCollection(owner, 'Webhook scope');
    const url = receiver.url(hookPath('scope'));

    const refused = await api('POST', '/webhooks/', {
      token: stranger.token,
      body: { url, events: ALL_EVENTS, collection_id: collectionId },
    });
    expect(refused.status, JSON.stringify(refused.body)).toBe(403);
    for (const missing of [randomUUID(), 'not-a-uuid']) {
      const response = await api('POST', '/webhooks/', {
        token: owner.token,
        body: { url, events: ALL_EVENTS, collection_id: missing },
      });
      expect(response.status, `${missing}: ${JSON.stringify(response.body)}`).toBe(404);
    }
    expect((await api('GET', '/webhooks/', { token: stranger.token })).body).toEqual([]);

    const mine = await api('POST', '/webhooks/', {
      token: owner.token,
      body: { url, events: ALL_EVENTS, collection_id: collectionId },
    });
    expect(mine.status).toBe(200);
    expect(mine.body.collection_id).toBe(collectionId);
  });

  it("another user's webhook is 404 on PATCH, DELETE and deliveries, and stays as it was", async () => {
    const [owner, other] = await Promise.all([signUp('hooks-own'), signUp('hooks-other')]);
    const hook = await register(owner, hookPath('own'));
    const attempts: [Method, string, unknown?][] = [
      ['PATCH', `/webhooks/${hook.id}`, { active: false }],
      ['PATCH', `/webhooks/${hook.id}`, { url: receiver.url('/hijacked') }],
      ['POST', `/webhooks/${hook.id}/rotate-secret`],
      ['DELETE', `/webhooks/${hook.id}`],
      ['GET', `/webhooks/${hook.id}/deliveries`],
    ];
    for (const [method, path, body] of attempts) {
      const response = await api(method, path, { token: other.token, body });
      expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBe(404);
    }
    // Ids that name nothing are 404 too.
    for (const id of [randomUUID(), 'not-a-uuid']) {
      expect((await api('PATCH', `/webhooks/${id}`, { token: owner.token, body: { active: false } })).status).toBe(404);
      expect((await api('DELETE', `/webhooks/${id}`, { token: owner.token })).status).toBe(404);
      expect((await api('GET', `/webhooks/${id}/deliveries`, { token: owner.token })).status).toBe(404);
      expect((await api('POST', `/webhooks/${id}/rotate-secret`, { token: owner.token })).status).toBe(404);
    }
    const listed = await api('GET', '/webhooks/', { token: owner.token });
    expect(listed.body).toEqual([expect.objectContaining({ id: hook.id, url: hook.url, active: true })]);

    // Its owner deletes it; then it is 404 for them too.
    expect(await api('DELETE', `/webhooks/${hook.id}`, { token: owner.token })).toMatchObject({
      status: 200,
      body: { deleted: hook.id },
    });
    expect((await api('GET', `/webhooks/${hook.id}/deliveries`, { token: owner.token })).status).toBe(404);
    expect((await api('GET', '/webhooks/', { token: owner.token })).body).toEqual([]);
  });

  it('409 past 20 webhooks per user', async () => {
    const user = await signUp('hooks-limit');
    for (let i = 0; i < 20; i++) await register(user, hookPath(`limit-${i}`));
    const refused = await api('POST', '/webhooks/', {
      token: user.token,
      body: { url: receiver.url(hookPath('limit-21')), events: ALL_EVENTS },
    });
    expect(refused.status, JSON.stringify(refused.body)).toBe(409);
    expect((await api('GET', '/webhooks/', { token: user.token })).body).toHaveLength(20);
  });

  it('an API key gets 403 on every webhook endpoint, whatever its scopes', async () => {
    const user = await signUp('hooks-key');
    const hook = await register(user, hookPath('key'));
    const created = await api('POST', '/keys/', {
      token: user.token,
      body: { name: 'every scope', scopes: ['query', 'ingest', 'collections:read', 'collections:write'] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const headers = { 'X-API-Key': created.body.key as string };
    // The key works where its scopes allow.
    expect((await api('GET', '/ingest/jobs', { headers })).status).toBe(200);

    const calls: [Method, string, unknown?][] = [
      ['POST', '/webhooks/', { url: receiver.url(hookPath('key-new')), events: ALL_EVENTS }],
      ['GET', '/webhooks/'],
      ['PATCH', `/webhooks/${hook.id}`, { active: false }],
      ['POST', `/webhooks/${hook.id}/rotate-secret`],
      ['DELETE', `/webhooks/${hook.id}`],
      ['GET', `/webhooks/${hook.id}/deliveries`],
    ];
    for (const [method, path, body] of calls) {
      const response = await api(method, path, { headers, body });
      expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBe(403);
    }
    const listed = await api('GET', '/webhooks/', { token: user.token });
    expect(listed.body).toEqual([expect.objectContaining({ id: hook.id, active: true })]);
  });
});

describe('deliveries', () => {
  it('a successful upload sends ingest.succeeded, signed, recorded as delivered at the first attempt', async () => {
    const user = await signUp('hooks-success');
    const collectionId = await createCollection(user, 'Delivered');
    const path = hookPath('success');
    const hook = await register(user, path);

    const job = await uploadAndWait(user, 'notes.txt', uniqueText('Succeeded'), collectionId);
    expect(job.status, job.error_message ?? '').toBe('succeeded');
    const [request] = await waitForRequestsFor(path, job.job_id);
    if (!request) throw new Error('no request');

    expect(request.method).toBe('POST');
    expect(request.path).toBe(path);
    expect(request.headers['content-type']).toMatch(/^application\/json/);
    expect(request.headers['x-service-event']).toBe('ingest.succeeded');
    expect(request.headers['x-service-delivery']).toMatch(UUID);
    await expectSigned(request, hook.secret);
    // Signed under this registration's secret, not any other.
    expect(request.headers['x-service-signature']).not.toBe(
      `sha256=${createHmac('sha256', `${hook.secret}x`).update(request.body).digest('hex')}`,
    );

    const payload = payloadOf(request);
    expect(Object.keys(payload).sort()).toEqual(PAYLOAD_FIELDS);
    const [document] = await db()<{ document_id: string }[]>`select document_id from ingest_jobs where id = ${job.job_id}`;
    expect(payload).toEqual({
      event: 'ingest.succeeded',
      job_id: job.job_id,
      collection_id: collectionId,
      source: 'notes.txt',
      chunks_total: job.chunks_total,
      occurred_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      document_id: document?.document_id,
      error_message: null,
    });
    expect(job.chunks_total).toBeGreaterThan(0);
    expect(payload.document_id).toMatch(UUID);
    // When the job ended.
    expect(Date.parse(payload.occurred_at)).toBe((await jobRow(job.job_id))?.updated_at.getTime());

    const delivery = await deliveryFor(user, hook.id, job.job_id, (d) => d.status === 'delivered');
    expect(delivery).toMatchObject({
      id: request.headers['x-service-delivery'],
      webhook_id: hook.id,
      job_id: job.job_id,
      event: 'ingest.succeeded',
      status: 'delivered',
      attempts: 1,
      response_status: 200,
      last_error: null,
      next_retry_at: null,
    });
    expect(delivery.attempts_log).toEqual([
      { attempt: 1, at: expect.any(String), response_status: 200, error: null, duration_ms: expect.any(Number) },
    ]);
    expect(requestsFor(path, job.job_id)).toHaveLength(1);
  });

  it('a document that fails sends ingest.failed with its error message', async () => {
    const user = await signUp('hooks-failed');
    const path = hookPath('failed');
    const hook = await register(user, path);

    const job = await uploadAndWait(user, 'corrupt-header-only.pdf', fixture('corrupt-header-only.pdf'));
    expect(job.status).toBe('failed');
    expect(job.error_message).toMatch(/corrupt|could not be read|damaged/i);
    const [request] = await waitForRequestsFor(path, job.job_id);
    if (!request) throw new Error('no request');
    expect(request.headers['x-service-event']).toBe('ingest.failed');
    await expectSigned(request, hook.secret);
    expect(payloadOf(request)).toEqual({
      event: 'ingest.failed',
      job_id: job.job_id,
      collection_id: null,
      source: 'corrupt-header-only.pdf',
      chunks_total: job.chunks_total,
      occurred_at: expect.any(String),
      // The failed job's document is gone.
      document_id: null,
      error_message: job.error_message,
    });
    const delivery = await deliveryFor(user, hook.id, job.job_id, (d) => d.status === 'delivered');
    expect(delivery).toMatchObject({ event: 'ingest.failed', attempts: 1, response_status: 200 });
  });

  it('a job that ends partial sends ingest.partial, with its message, to the hooks that asked for it', async () => {
    const user = await signUp('hooks-partial');
    const partialPath = hookPath('partial');
    const succeededPath = hookPath('partial-succeeded-only');
    const hook = await register(user, partialPath, { events: ['ingest.partial'] });
    const succeededOnly = await register(user, succeededPath, { events: ['ingest.succeeded'] });
    // Most of the day's quota spent already (as ingest-quota.test.ts does): the document keeps 2 chunks.
    await db()`insert into ingest_usage (job_id, range_start, user_id, chunks)
               values (${randomUUID()}, 1, ${user.id}, ${DAILY_INGEST_CHUNKS - 2})`;
    const text = Array.from({ length: 120 }, (_, i) => `Sentence ${i} of a partial document about topic ${i * 7}.`).join(' ');

    const job = await uploadAndWait(user, 'partial.txt', `${randomUUID()} ${text}`);
    expect(job).toMatchObject({ status: 'partial', chunks_total: 2 });
    const [request] = await waitForRequestsFor(partialPath, job.job_id);
    if (!request) throw new Error('no request');
    expect(request.headers['x-service-event']).toBe('ingest.partial');
    await expectSigned(request, hook.secret);
    expect(payloadOf(request)).toMatchObject({
      event: 'ingest.partial',
      job_id: job.job_id,
      chunks_total: 2,
      document_id: expect.stringMatching(UUID),
      error_message: job.error_message,
    });
    expect(job.error_message).toMatch(/quota/);
    await deliveryFor(user, hook.id, job.job_id, (d) => d.status === 'delivered');
    expect(await deliveriesOf(user, succeededOnly.id)).toEqual([]);
    expect(receiver.requests(succeededPath)).toEqual([]);
  });

  it("sends each hook only the events and the collection it asked for, and never another user's jobs", async () => {
    const [user, other] = await Promise.all([signUp('hooks-filter'), signUp('hooks-filter-other')]);
    const [inside, outside] = await Promise.all([createCollection(user, 'Watched'), createCollection(user, 'Not watched')]);
    // The other user is a member of the watched collection, with the ingest permission.
    const share = await api('POST', `/collections/${inside}/shares`, { token: user.token, body: { permission: 'ingest' } });
    expect(share.status, JSON.stringify(share.body)).toBe(200);
    const joined = await api('POST', `/collections/join/${share.body.share_token}`, { token: other.token });
    expect(joined.status, JSON.stringify(joined.body)).toBe(200);
    const paths = {
      all: hookPath('filter-all'),
      failedOnly: hookPath('filter-failed-only'),
      inside: hookPath('filter-inside'),
      otherAll: hookPath('filter-other-inside'),
    };
    const hooks = {
      all: await register(user, paths.all),
      failedOnly: await register(user, paths.failedOnly, { events: ['ingest.failed'] }),
      inside: await register(user, paths.inside, { collectionId: inside }),
      // A member may watch the collection too: for their own jobs in it.
      otherAll: await register(other, paths.otherAll, { collectionId: inside }),
    };

    const [inOutside, personal, inInside, othersJob] = await Promise.all([
      uploadAndWait(user, 'outside.txt', uniqueText('Outside'), outside),
      uploadAndWait(user, 'personal.txt', uniqueText('Personal')),
      uploadAndWait(user, 'inside.txt', uniqueText('Inside'), inside),
      // Another user's job in the very collection the owner watches.
      uploadAndWait(other, 'theirs.txt', uniqueText('Theirs'), inside),
    ]);
    for (const job of [inOutside, personal, inInside, othersJob]) expect(job.status, job.error_message ?? '').toBe('succeeded');

    // The hooks that asked for them get them...
    for (const job of [inOutside, personal, inInside]) {
      const [request] = await waitForRequestsFor(paths.all, job.job_id);
      expect(payloadOf(request as ReceivedRequest)).toMatchObject({ event: 'ingest.succeeded', job_id: job.job_id });
      await expectSigned(request as ReceivedRequest, hooks.all.secret);
    }
    const [inInsideRequest] = await waitForRequestsFor(paths.inside, inInside.job_id);
    expect(payloadOf(inInsideRequest as ReceivedRequest)).toMatchObject({ collection_id: inside });
    await expectSigned(inInsideRequest as ReceivedRequest, hooks.inside.secret);
    const [theirs] = await waitForRequestsFor(paths.otherAll, othersJob.job_id);
    await expectSigned(theirs as ReceivedRequest, hooks.otherAll.secret);
    await deliveryFor(user, hooks.all.id, personal.job_id, (d) => d.status === 'delivered');
    await deliveryFor(user, hooks.inside.id, inInside.job_id, (d) => d.status === 'delivered');

    // ...and the others have no delivery at all: they are made with the job's ending, which is past.
    expect(await deliveriesOf(user, hooks.failedOnly.id)).toEqual([]);
    expect((await deliveriesOf(user, hooks.inside.id)).map((d) => d.job_id)).toEqual([inInside.job_id]);
    expect((await deliveriesOf(user, hooks.all.id)).map((d) => d.job_id).sort()).toEqual(
      [inOutside.job_id, personal.job_id, inInside.job_id].sort(),
    );
    expect((await deliveriesOf(other, hooks.otherAll.id)).map((d) => d.job_id)).toEqual([othersJob.job_id]);
    const [{ count } = { count: -1 }] = await db()<{ count: number }[]>`
      select count(*)::int as count from webhook_deliveries
       where webhook_id in ${db()([hooks.all.id, hooks.failedOnly.id, hooks.inside.id])} and job_id = ${othersJob.job_id}`;
    expect(count).toBe(0);
    expect(receiver.requests(paths.failedOnly)).toEqual([]);
    expect(receiver.requests(paths.inside).map((r) => payloadOf(r).job_id)).toEqual([inInside.job_id]);
    expect(receiver.requests(paths.otherAll).map((r) => payloadOf(r).job_id)).toEqual([othersJob.job_id]);
    expect(receiver.requests(paths.all).some((r) => payloadOf(r).job_id === othersJob.job_id)).toBe(false);
  });

  it('a receiver that answers 500 twice, then 200, gets the same signed body three times; the job did not wait', async () => {
    const user = await signUp('hooks-retry');
    const path = hookPath('retry');
    receiver.answer(path, { status: 500 }, { status: 500 }, { status: 200 });
    const hook = await register(user, path);

    const job = await uploadAndWait(user, 'retried.txt', uniqueText('Retried'));
    expect(job.status, job.error_message ?? '').toBe('succeeded');
    const delivery = await deliveryFor(user, hook.id, job.job_id, (d) => d.status === 'delivered');
    expect(delivery).toMatchObject({
      status: 'delivered',
      attempts: 3,
      response_status: 200,
      last_error: null,
      next_retry_at: null,
    });
    expect(delivery.attempts_log).toEqual([
      expect.objectContaining({ attempt: 1, response_status: 500, error: 'The receiver answered HTTP 500' }),
      expect.objectContaining({ attempt: 2, response_status: 500, error: 'The receiver answered HTTP 500' }),
      expect.objectContaining({ attempt: 3, response_status: 200, error: null }),
    ]);
    const times = delivery.attempts_log.map((a) => Date.parse(a.at));
    expect(times).toEqual([...times].sort((a, b) => a - b));

    const requests = requestsFor(path, job.job_id);
    expect(requests).toHaveLength(3);
    const [first] = requests as [ReceivedRequest];
    for (const request of requests) {
      expect(request.headers['x-service-delivery']).toBe(delivery.id);
      expect(request.headers['x-service-event']).toBe('ingest.succeeded');
      expect(request.body.equals(first.body)).toBe(true);
      expect(request.headers['x-service-signature']).toBe(first.headers['x-service-signature']);
      expect(request.headers['webhook-id']).toBe(delivery.id);
      await expectSigned(request, hook.secret);
    }
    // Each attempt is signed anew, at its own time.
    const stamps = requests.map((r) => Number(r.headers['webhook-timestamp']));
    expect(stamps).toEqual([...stamps].sort((a, b) => a - b));
    for (const [i, request] of requests.entries()) {
      expect(Math.abs((stamps[i] as number) * 1000 - request.receivedAt)).toBeLessThan(5_000);
    }
    // The job had ended, succeeded, before the first attempt was made, and stays so.
    const row = await jobRow(job.job_id);
    expect(row?.status).toBe('succeeded');
    expect(row?.updated_at.getTime()).toBeLessThanOrEqual(times[0] as number);
    expect((await api('GET', `/ingest/jobs/${job.job_id}`, { token: user.token })).body.status).toBe('succeeded');
  });

  it('a redirect is a failed attempt, and its target is never requested', async () => {
    const user = await signUp('hooks-redirect');
    const path = hookPath('redirect');
    const target = hookPath('redirect-target');
    receiver.answer(path, { status: 302, redirectTo: target }, { status: 307, redirectTo: target }, { status: 200 });
    const hook = await register(user, path);

    const job = await uploadAndWait(user, 'redirected.txt', uniqueText('Redirected'));
    expect(job.status, job.error_message ?? '').toBe('succeeded');
    const delivery = await deliveryFor(user, hook.id, job.job_id, (d) => d.status === 'delivered');
    expect(delivery.attempts).toBe(3);
    expect(delivery.attempts_log).toEqual([
      expect.objectContaining({ attempt: 1, response_status: 302, error: expect.stringMatching(/redirect.*302|302.*redirect/i) }),
      expect.objectContaining({ attempt: 2, response_status: 307, error: expect.stringMatching(/redirect.*307|307.*redirect/i) }),
      expect.objectContaining({ attempt: 3, response_status: 200, error: null }),
    ]);
    expect(requestsFor(path, job.job_id)).toHaveLength(3);
    expect(receiver.requests(target)).toEqual([]);
  });

  it('a receiver that hangs up is an attempt without an answer; any 2xx then delivers', async () => {
    const user = await signUp('hooks-hang-up');
    const path = hookPath('hang-up');
    receiver.answer(path, { hangUp: true }, { status: 202 });
    const hook = await register(user, path);

    const job = await uploadAndWait(user, 'hung-up.txt', uniqueText('Hung up'));
    expect(job.status, job.error_message ?? '').toBe('succeeded');
    const delivery = await deliveryFor(user, hook.id, job.job_id, (d) => d.status === 'delivered');
    expect(delivery).toMatchObject({ attempts: 2, response_status: 202, last_error: null });
    expect(delivery.attempts_log).toEqual([
      expect.objectContaining({ attempt: 1, response_status: null, error: 'The receiver could not be reached' }),
      expect.objectContaining({ attempt: 2, response_status: 202, error: null }),
    ]);
    expect(requestsFor(path, job.job_id)).toHaveLength(2);
  });

  it("a captured delivery sent again, or later, or altered, fails the README's verifier; the genuine one passes", async () => {
    const user = await signUp('hooks-replay');
    const path = hookPath('replay');
    const hook = await register(user, path);
    const job = await uploadAndWait(user, 'replayed.txt', uniqueText('Replayed'));
    const [genuine] = await waitForRequestsFor(path, job.job_id);
    if (!genuine) throw new Error('no request');
    await deliveryFor(user, hook.id, job.job_id, (d) => d.status === 'delivered');

    const seen = seenIds();
    expect(await verify(genuine, hook.secret, seen)).toMatchObject({ ok: true, id: genuine.headers['webhook-id'] });

    // Someone who captured it sends it to the receiver again, byte for byte.
    const names = ['content-type', 'webhook-id', 'webhook-timestamp', 'webhook-signature', 'x-service-signature'];
    const copied = Object.fromEntries(names.map((name) => [name, genuine.headers[name] as string]));
    const resent = await fetch(receiver.url(path), { method: 'POST', headers: copied, body: new Uint8Array(genuine.body) });
    expect(resent.status).toBe(200);
    const [, replay] = (await receiver.waitForRequests(path, 2)) as [ReceivedRequest, ReceivedRequest];
    // Its signature is still valid, so only the signed id gives it away...
    expect(await verify(replay, hook.secret)).toMatchObject({ ok: true });
    expect(await verify(replay, hook.secret, seen)).toEqual({ ok: false, reason: 'replayed' });
    // ...and the contract's body-only header cannot tell it from the original at all.
    expect(replay.headers['x-service-signature']).toBe(genuine.headers['x-service-signature']);

    // Sent more than 5 minutes after it was signed, to a receiver that has forgotten the id: stale.
    const late = genuine.receivedAt + (TOLERANCE_SECONDS + 1) * 1000;
    expect(await verify(genuine, hook.secret, seenIds(), late)).toEqual({ ok: false, reason: 'stale timestamp' });
    // A fresh timestamp, or another id, breaks the signature.
    const altered = (name: string, value: string): ReceivedRequest => ({
      ...genuine,
      headers: { ...genuine.headers, [name]: value },
    });
    const now = String(Math.floor(late / 1000));
    expect(await verify(altered('webhook-timestamp', now), hook.secret, seenIds(), late)).toEqual({
      ok: false,
      reason: 'bad signature',
    });
    expect(await verify(altered('webhook-id', randomUUID()), hook.secret)).toEqual({ ok: false, reason: 'bad signature' });
    // Nor does another registration's secret verify it.
    const other = await register(user, hookPath('replay-other'));
    expect(await verify(genuine, other.secret)).toEqual({ ok: false, reason: 'bad signature' });
  });

  it('the signature covers the raw UTF-8 bytes of the body: a file name beyond ASCII', async () => {
    const user = await signUp('hooks-utf8');
    const path = hookPath('utf8');
    const hook = await register(user, path);
    const name = 'Résumé — 東京 ✓.txt';

    const job = await uploadAndWait(user, name, uniqueText('Unicode'));
    expect(job.status, job.error_message ?? '').toBe('succeeded');
    const [request] = await waitForRequestsFor(path, job.job_id);
    if (!request) throw new Error('no request');
    await expectSigned(request, hook.secret);
    // Signed over the bytes, which are UTF-8 (a signature over another encoding would not match).
    expect(request.body.toString('utf8')).toContain(name);
    expect(payloadOf(request).source).toBe(job.source);
    expect(job.source).toBe(name);
  });

  it('a paused webhook gets nothing for jobs ending meanwhile; resumed, it gets the next', async () => {
    const user = await signUp('hooks-pause');
    const pausedPath = hookPath('paused');
    const controlPath = hookPath('pause-control');
    const paused = await register(user, pausedPath);
    const control = await register(user, controlPath);

    const off = await api('PATCH', `/webhooks/${paused.id}`, { token: user.token, body: { active: false } });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ id: paused.id, active: false, url: paused.url, events: paused.events });
    const during = await uploadAndWait(user, 'during.txt', uniqueText('During the pause'));
    expect(during.status).toBe('succeeded');
    await waitForRequestsFor(controlPath, during.job_id);
    await deliveryFor(user, control.id, during.job_id, (d) => d.status === 'delivered');
    expect(await deliveriesOf(user, paused.id)).toEqual([]);
    expect(receiver.requests(pausedPath)).toEqual([]);

    const on = await api('PATCH', `/webhooks/${paused.id}`, { token: user.token, body: { active: true } });
    expect(on.status).toBe(200);
    expect(on.body.active).toBe(true);
    const after = await uploadAndWait(user, 'after.txt', uniqueText('After the pause'));
    const [request] = await waitForRequestsFor(pausedPath, after.job_id);
    await expectSigned(request as ReceivedRequest, paused.secret);
    await deliveryFor(user, paused.id, after.job_id, (d) => d.status === 'delivered');
    // The job that ended during the pause is not sent late.
    expect((await deliveriesOf(user, paused.id)).map((d) => d.job_id)).toEqual([after.job_id]);
    expect(receiver.requests(pausedPath).map((r) => payloadOf(r).job_id)).toEqual([after.job_id]);
  });

  it('cancelling a job sends ingest.failed with "Cancelled"', async () => {
    const user = await signUp('hooks-cancel');
    const path = hookPath('cancel');
    const hook = await register(user, path);
    const url = `${stack.pagesUrl}/article.html?cancel=${randomUUID()}`;
    const { jobId } = await queuedUrlJob(user.id, url);

    const cancelled = await api('POST', `/ingest/jobs/${jobId}/cancel`, { token: user.token });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'failed', error_message: 'Cancelled' });
    const [request] = await waitForRequestsFor(path, jobId);
    if (!request) throw new Error('no request');
    expect(request.headers['x-service-event']).toBe('ingest.failed');
    await expectSigned(request, hook.secret);
    expect(payloadOf(request)).toMatchObject({
      event: 'ingest.failed',
      job_id: jobId,
      collection_id: null,
      source: url,
      chunks_total: 0,
      error_message: 'Cancelled',
      // The cancellation removes the document, as any failed job's goes: the event names none, as the job does.
      document_id: null,
    });
    expect(cancelled.body.document_id).toBeNull();
    await deliveryFor(user, hook.id, jobId, (d) => d.status === 'delivered');

    // Cancelling again answers the same and sends nothing more.
    const again = await api('POST', `/ingest/jobs/${jobId}/cancel`, { token: user.token });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ status: 'failed', error_message: 'Cancelled' });
    expect((await deliveriesOf(user, hook.id)).filter((d) => d.job_id === jobId)).toHaveLength(1);
  });

  it('an upload of bytes the collection already holds sends ingest.succeeded for its own job', async () => {
    const user = await signUp('hooks-duplicate');
    const collectionId = await createCollection(user, 'Duplicates');
    const path = hookPath('duplicate');
    const hook = await register(user, path);
    const text = uniqueText('Twice');

    const first = await uploadAndWait(user, 'original.txt', text, collectionId);
    expect(first.status, first.error_message ?? '').toBe('succeeded');
    const [firstRequest] = await waitForRequestsFor(path, first.job_id);

    const again = await upload(user.token, 'copy.txt', text, collectionId);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.duplicate).toBe(true);
    expect(again.body.job_id).not.toBe(first.job_id);
    const second = await waitForJob(user.token, again.body.job_id);
    expect(second).toMatchObject({ status: 'succeeded', chunks_total: first.chunks_total });

    const [request] = await waitForRequestsFor(path, second.job_id);
    if (!request) throw new Error('no request');
    expect(request.headers['x-service-event']).toBe('ingest.succeeded');
    await expectSigned(request, hook.secret);
    expect(payloadOf(request)).toMatchObject({
      event: 'ingest.succeeded',
      job_id: second.job_id,
      collection_id: collectionId,
      document_id: again.body.document_id,
      source: 'copy.txt',
      chunks_total: first.chunks_total,
      error_message: null,
    });
    expect(payloadOf(firstRequest as ReceivedRequest).document_id).toBe(again.body.document_id);
    const delivery = await deliveryFor(user, hook.id, second.job_id, (d) => d.status === 'delivered');
    expect(delivery.id).not.toBe(firstRequest?.headers['x-service-delivery']);
    expect(request.headers['x-service-delivery']).toBe(delivery.id);
  });
});

// These mostly wait on the worker's 10 s timeout and the queue's retries: they run side by side.
describe.concurrent('deliveries that take a while', () => {
  it('a receiver slower than 10 s costs an attempt (timed out, retrying later), never the job', async () => {
    const user = await signUp('hooks-slow');
    const path = hookPath('slow');
    // The first request is held past the worker's 10 s; the retry is held until the test has seen the
    // delivery waiting for it, then answered.
    const retry = gate();
    receiver.answer(path, { delayMs: 15_000 }, { hold: retry.promise, status: 200 });
    const hook = await register(user, path);

    const job = await uploadAndWait(user, 'slow.txt', uniqueText('Slow'));
    expect(job.status, job.error_message ?? '').toBe('succeeded');
    const [held] = await waitForRequestsFor(path, job.job_id);
    // While the receiver holds the first attempt, the job has ended already.
    expect((await api('GET', `/ingest/jobs/${job.job_id}`, { token: user.token })).body.status).toBe('succeeded');
    expect((await jobRow(job.job_id))?.updated_at.getTime()).toBeLessThanOrEqual((held as ReceivedRequest).receivedAt);

    const retrying = await deliveryFor(user, hook.id, job.job_id, (d) => d.attempts >= 1, 30_000);
    const seenAt = Date.now();
    expect(retrying).toMatchObject({
      status: 'retrying',
      attempts: 1,
      response_status: null,
      last_error: expect.stringMatching(/did not answer within 10 s/),
    });
    expect(retrying.next_retry_at).not.toBeNull();
    expect(Date.parse(retrying.next_retry_at as string)).toBeGreaterThan(seenAt);
    expect(retrying.attempts_log).toEqual([
      expect.objectContaining({ attempt: 1, response_status: null, error: retrying.last_error }),
    ]);
    expect(retrying.attempts_log[0]?.duration_ms).toBeGreaterThanOrEqual(9_500);
    expect(retrying.attempts_log[0]?.duration_ms).toBeLessThan(15_000);

    retry.open();
    const delivered = await deliveryFor(user, hook.id, job.job_id, (d) => d.status === 'delivered', 30_000);
    expect(delivered).toMatchObject({ attempts: 2, response_status: 200, last_error: null, next_retry_at: null });
    const requests = requestsFor(path, job.job_id);
    expect(requests).toHaveLength(2);
    expect(requests.map((r) => r.headers['x-service-delivery'])).toEqual([delivered.id, delivered.id]);
  }, 60_000);

  it('a receiver that always fails: failed after the fifth retry, and nothing more is sent', async () => {
    const user = await signUp('hooks-down');
    const path = hookPath('down');
    receiver.answer(path, { status: 503 });
    const hook = await register(user, path);

    const job = await uploadAndWait(user, 'down.txt', uniqueText('Down'));
    expect(job.status, job.error_message ?? '').toBe('succeeded');
    const failed = await deliveryFor(user, hook.id, job.job_id, (d) => d.status === 'failed', 60_000);
    expect(failed).toMatchObject({
      attempts: 6,
      response_status: 503,
      last_error: 'The receiver answered HTTP 503',
      next_retry_at: null,
    });
    expect(failed.attempts_log.map((a) => [a.attempt, a.response_status])).toEqual([
      [1, 503],
      [2, 503],
      [3, 503],
      [4, 503],
      [5, 503],
      [6, 503],
    ]);
    const requests = requestsFor(path, job.job_id);
    expect(requests).toHaveLength(6);
    for (const request of requests) {
      expect(request.headers['x-service-delivery']).toBe(failed.id);
      await expectSigned(request, hook.secret);
    }
    // The sixth attempt was the last (retries: 5), and it settled the delivery: after a quiet period
    // (ten times the first retry's backoff) nothing more has arrived and the record stays as it is.
    await sleep(3_000);
    expect(requestsFor(path, job.job_id)).toHaveLength(6);
    const after = (await deliveriesOf(user, hook.id)).find((d) => d.id === failed.id);
    expect(after).toMatchObject({ status: 'failed', attempts: 6, last_error: 'The receiver answered HTTP 503' });
    expect((await jobRow(job.job_id))?.status).toBe('succeeded');
  }, 90_000);

  it('a webhook paused while a delivery waits for its retry: the retry is skipped, not sent', async () => {
    const user = await signUp('hooks-skip');
    const path = hookPath('skip');
    // The first attempt is held until the webhook is paused, then refused; the retry comes after the pause.
    const paused = gate();
    receiver.answer(path, { status: 500, hold: paused.promise }, { status: 200 });
    const hook = await register(user, path);

    const job = await uploadAndWait(user, 'skipped.txt', uniqueText('Skipped'));
    expect(job.status, job.error_message ?? '').toBe('succeeded');
    await waitForRequestsFor(path, job.job_id);
    const off = await api('PATCH', `/webhooks/${hook.id}`, { token: user.token, body: { active: false } });
    paused.open();
    expect(off.status).toBe(200);

    const skipped = await deliveryFor(user, hook.id, job.job_id, (d) => d.status === 'skipped');
    expect(skipped).toMatchObject({ last_error: 'The webhook was paused before this delivery', next_retry_at: null });
    expect(skipped.attempts_log[0]).toMatchObject({ attempt: 1, response_status: 500 });
    // Skipping is no attempt: the one made is all that is counted.
    expect(skipped.attempts).toBe(1);
    expect(skipped.attempts_log).toHaveLength(1);
    // Settled: resuming the webhook does not send it late.
    expect((await api('PATCH', `/webhooks/${hook.id}`, { token: user.token, body: { active: true } })).status).toBe(200);
    await sleep(1_500);
    expect(requestsFor(path, job.job_id)).toHaveLength(1);
    expect((await deliveriesOf(user, hook.id)).find((d) => d.id === skipped.id)?.status).toBe('skipped');
  });

  it('a rotated secret signs every attempt from then on, the retry of an earlier delivery included', async () => {
    const user = await signUp('hooks-rotate');
    const path = hookPath('rotate');
    // The first attempt is signed and sent before the rotation, held, then refused; its retry comes after.
    const rotated = gate();
    receiver.answer(path, { status: 500, hold: rotated.promise }, { status: 200 });
    const hook = await register(user, path);

    const job = await uploadAndWait(user, 'rotated.txt', uniqueText('Rotated'));
    expect(job.status, job.error_message ?? '').toBe('succeeded');
    await waitForRequestsFor(path, job.job_id);
    const rotation = await api('POST', `/webhooks/${hook.id}/rotate-secret`, { token: user.token });
    rotated.open();
    expect(rotation.status, JSON.stringify(rotation.body)).toBe(200);
    const { secret, updated_at, ...unchanged } = rotation.body;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secret).not.toBe(hook.secret);
    const { secret: _oldSecret, updated_at: _registeredAt, ...registered } = hook;
    expect(unchanged).toEqual(registered);
    expect(Date.parse(updated_at)).toBeGreaterThanOrEqual(Date.parse(hook.updated_at));
    // Shown once: the list has no secret.
    expect((await api('GET', '/webhooks/', { token: user.token })).body).toEqual([{ ...unchanged, updated_at }]);

    const delivered = await deliveryFor(user, hook.id, job.job_id, (d) => d.status === 'delivered');
    expect(delivered.attempts).toBe(2);
    const [before, after] = requestsFor(path, job.job_id) as [ReceivedRequest, ReceivedRequest];
    await expectSigned(before, hook.secret);
    await expectSigned(after, secret);
    expect(after.headers['x-service-delivery']).toBe(before.headers['x-service-delivery']);

    // The next job's delivery: the new secret only.
    const next = await uploadAndWait(user, 'rotated-again.txt', uniqueText('Rotated again'));
    const [request] = await waitForRequestsFor(path, next.job_id);
    if (!request) throw new Error('no request');
    await expectSigned(request, secret);
    expect(request.headers['x-service-signature']).not.toBe(
      `sha256=${createHmac('sha256', hook.secret).update(request.body).digest('hex')}`,
    );
  });

  it('a webhook deleted while a delivery waits for its retry: nothing more is sent, its records go with it', async () => {
    const user = await signUp('hooks-deleted');
    const path = hookPath('deleted');
    // The first attempt is held until the webhook is deleted, then refused; the retry comes after the deletion.
    const deleted = gate();
    receiver.answer(path, { status: 500, hold: deleted.promise }, { status: 200 });
    const hook = await register(user, path);

    const job = await uploadAndWait(user, 'deleted.txt', uniqueText('Deleted'));
    expect(job.status, job.error_message ?? '').toBe('succeeded');
    await waitForRequestsFor(path, job.job_id);
    const removed = await api('DELETE', `/webhooks/${hook.id}`, { token: user.token });
    deleted.open();
    expect(removed.status).toBe(200);
    const [{ count } = { count: -1 }] = await db()<{ count: number }[]>`
      select count(*)::int as count from webhook_deliveries where webhook_id = ${hook.id}`;
    expect(count).toBe(0);
    // The held attempt is refused now, and its retry comes 300 ms later (fast backoff), finding nothing to send.
    await sleep(3_000);
    expect(requestsFor(path, job.job_id)).toHaveLength(1);
  });

  it('a registration on an origin now trusted for ingestion only fails at delivery, at once, without retries', async () => {
    const user = await signUp('hooks-origin-moved');
    const path = hookPath('origin-moved');
    const hook = await register(user, path);
    // As if the operator had taken the receiver's origin off WEBHOOK_TRUSTED_ORIGINS while it stayed in
    // INGEST_TRUSTED_ORIGINS: the registration, accepted then, now names an ingestion-only origin.
    await db()`update webhooks set url = ${`${stack.pagesUrl}/hook`} where id = ${hook.id}`;

    const job = await uploadAndWait(user, 'origin-moved.txt', uniqueText('Origin moved'));
    expect(job.status, job.error_message ?? '').toBe('succeeded');
    const failed = await deliveryFor(user, hook.id, job.job_id, (d) => d.status !== 'pending');
    expect(failed).toMatchObject({
      status: 'failed',
      attempts: 1,
      response_status: null,
      last_error: 'The URL is refused: The URL is on an origin trusted for URL ingestion only; webhooks are not sent there',
      next_retry_at: null,
    });
    await sleep(2_000);
    expect((await deliveriesOf(user, hook.id)).find((d) => d.id === failed.id)).toMatchObject({ status: 'failed', attempts: 1 });
    expect(receiver.requests(path)).toEqual([]);
  });

  it('the last attempt is counted from our own records, never from the unsigned Upstash-Retried header', async () => {
    const user = await signUp('hooks-retried');
    const path = hookPath('retried');
    receiver.answer(path, { status: 503 });
    const hook = await register(user, path);
    // A delivery as a job's ending writes it, marked queued so that only this test delivers it.
    const jobId = randomUUID();
    const payload = JSON.stringify({ event: 'ingest.succeeded', job_id: jobId, source: 'retried.txt' });
    const [row] = await db()<{ id: string }[]>`
      insert into webhook_deliveries (webhook_id, job_id, event, payload, queued_at)
      values (${hook.id}, ${jobId}, 'ingest.succeeded', ${payload}, now()) returning id`;
    const deliveryId = (row as { id: string }).id;
    /** The delivery's queue message, signed as QStash signs it (its URL and body, not its headers). */
    const deliver = async (headers: Record<string, string> = {}) => {
      const bytes = new TextEncoder().encode(JSON.stringify({ delivery_id: deliveryId }));
      const signature = await signDelivery(stack.qstashSigningKeys.current, `${stack.ingestUrl}${WEBHOOK_PATH}`, bytes);
      const url = `${stack.ingestUrl}${WEBHOOK_PATH}`;
      return (await fetch(url, { method: 'POST', headers: { 'upstash-signature': signature, ...headers }, body: bytes })).status;
    };
    const current = async () => (await deliveriesOf(user, hook.id)).find((d) => d.id === deliveryId);

    // QStash's last retry of a delivery is its fifth: claimed by a header on the first attempt, it changes nothing.
    expect(await deliver({ 'upstash-retried': String(WEBHOOK_RETRIES) })).toBe(500);
    const retrying = await current();
    expect(retrying).toMatchObject({ status: 'retrying', attempts: 1, response_status: 503 });
    expect(retrying?.next_retry_at).not.toBeNull();

    // As if five attempts had been made: by our count the next is the last, header or none.
    await db()`update webhook_deliveries set attempts = ${WEBHOOK_RETRIES} where id = ${deliveryId}`;
    expect(await deliver()).toBe(200);
    expect(await current()).toMatchObject({
      status: 'failed',
      attempts: WEBHOOK_RETRIES + 1,
      response_status: 503,
      last_error: 'The receiver answered HTTP 503',
      next_retry_at: null,
    });
    expect(receiver.requests(path)).toHaveLength(2);
  });

  it('the address policy applies at delivery: a URL now refused fails at once, without retries', async () => {
    const user = await signUp('hooks-policy');
    const path = hookPath('policy');
    const controlPath = hookPath('policy-control');
    const hook = await register(user, path);
    const control = await register(user, controlPath);
    // As if the registered host now resolved to a private address.
    await db()`update webhooks set url = 'http://10.0.0.1/hook' where id = ${hook.id}`;

    const job = await uploadAndWait(user, 'policy.txt', uniqueText('Policy'));
    expect(job.status, job.error_message ?? '').toBe('succeeded');
    const failed = await deliveryFor(user, hook.id, job.job_id, (d) => d.status !== 'pending');
    expect(failed).toMatchObject({
      status: 'failed',
      attempts: 1,
      response_status: null,
      last_error: expect.stringMatching(/refused.*(private|reserved)/i),
      next_retry_at: null,
    });
    expect(failed.attempts_log).toHaveLength(1);
    // The registration with the allowed URL got the same event meanwhile.
    await deliveryFor(user, control.id, job.job_id, (d) => d.status === 'delivered');
    // No retry (fast backoff would make one within 300 ms).
    await sleep(2_000);
    const after = (await deliveriesOf(user, hook.id)).find((d) => d.id === failed.id);
    expect(after).toMatchObject({ status: 'failed', attempts: 1 });
    expect(receiver.requests(path)).toEqual([]);
  });
});
