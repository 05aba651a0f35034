import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { Client, QstashError, Receiver, SignatureError } from '@upstash/qstash';
import { Hono } from 'hono';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../devstack/ports.ts';
import { parseDuration } from '../../devstack/qstash/durations.ts';
import { compileRetryDelay } from '../../devstack/qstash/retry-delay.ts';
import { createQStashServer, type QStash, type QStashOptions } from '../../devstack/qstash/server.ts';

const token = 'qstash-test-token';
const currentSigningKey = 'sig_testCurrentKey000000000000000';
const nextSigningKey = 'sig_testNextKey00000000000000000';

interface Received {
  path: string;
  url: string;
  method: string;
  headers: Headers;
  body: string;
  at: number;
}

type Behaviour = (attempt: number) => Response | Promise<Response>;

// The destination side: one server that records every request and answers per path.
const received: Received[] = [];
const behaviours = new Map<string, Behaviour>();
const hanging: (() => void)[] = [];
let receiverServer: Server;
let receiverBase: string;

const hits = (path: string) => received.filter((request) => request.path === path);
const newPath = (name: string) => `/${name}/${randomUUID()}`;
const urlOf = (path: string) => `${receiverBase}${path}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** A response that never comes until the test run ends; QStash gives up on it first. */
const hang = () => new Promise<Response>((resolve) => hanging.push(() => resolve(new Response('late'))));

function verify(
  request: Received,
  keys = { currentSigningKey, nextSigningKey },
  overrides: { body?: string; url?: string } = {},
) {
  return new Receiver(keys).verify({
    signature: request.headers.get('upstash-signature') ?? '',
    body: overrides.body ?? request.body,
    url: overrides.url ?? request.url,
  });
}

function listen(app: Hono, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port }, () => resolve(server as Server));
    server.once('error', reject);
  });
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

interface Running {
  qstash: QStash;
  client: Client;
  baseUrl: string;
  stop(): Promise<void>;
}

async function startQStash(overrides: Partial<QStashOptions> = {}): Promise<Running> {
  const qstash = createQStashServer({ token, currentSigningKey, nextSigningKey, backoffMs: (retry) => 40 * retry, ...overrides });
  const root = new Hono();
  root.route('/qstash', qstash.app);
  const server = await listen(root, await freePort());
  const port = (server.address() as { port: number }).port;
  const baseUrl = `http://127.0.0.1:${port}/qstash`;
  return {
    qstash,
    baseUrl,
    client: new Client({ baseUrl, token, retry: false }),
    stop: async () => {
      await qstash.stop();
      await close(server);
    },
  };
}

const decodeBase64 = (value: string) => Buffer.from(value, 'base64').toString('utf8');

let main: Running;

beforeAll(async () => {
  const app = new Hono();
  app.all('*', async (c) => {
    const path = new URL(c.req.url).pathname;
    const request: Received = {
      path,
      url: c.req.url,
      method: c.req.method,
      headers: c.req.raw.headers,
      body: await c.req.text(),
      at: Date.now(),
    };
    received.push(request);
    const behaviour = behaviours.get(path);
    return behaviour ? behaviour(hits(path).length) : c.text('ok');
  });
  receiverServer = await listen(app, await freePort());
  receiverBase = `http://127.0.0.1:${(receiverServer.address() as { port: number }).port}`;
  main = await startQStash();
});

afterAll(async () => {
  await main?.stop();
  for (const release of hanging) release();
  if (receiverServer) await close(receiverServer);
});

describe('QStash devstack: delivery and signatures', () => {
  it('delivers a JSON message with QStash headers and a signature the SDK Receiver accepts', async () => {
    const path = newPath('ok');
    const published = await main.client.publishJSON({
      url: urlOf(path),
      body: { hello: 'world' },
      headers: { 'X-Custom': 'abc' },
    });
    expect(published.messageId).toMatch(/^msg_/);
    expect(published.url).toBe(urlOf(path));
    await main.qstash.idle();

    const [request, ...rest] = hits(path);
    expect(rest).toHaveLength(0);
    expect(request).toBeDefined();
    if (!request) return;
    expect(request.method).toBe('POST');
    expect(JSON.parse(request.body)).toEqual({ hello: 'world' });
    expect(request.headers.get('content-type')).toBe('application/json');
    expect(request.headers.get('x-custom')).toBe('abc');
    expect(request.headers.get('upstash-message-id')).toBe(published.messageId);
    expect(request.headers.get('upstash-retried')).toBe('0');
    expect(request.headers.get('user-agent')).toBe('Upstash-QStash');
    expect(request.headers.get('authorization')).toBeNull();
    await expect(verify(request)).resolves.toBe(true);

    await expect(verify(request, undefined, { body: '{"hello":"there"}' })).rejects.toBeInstanceOf(SignatureError);
    await expect(verify(request, undefined, { url: urlOf('/elsewhere') })).rejects.toBeInstanceOf(SignatureError);
    const strangers = { currentSigningKey: 'sig_someoneElse1', nextSigningKey: 'sig_someoneElse2' };
    await expect(verify(request, strangers)).rejects.toBeInstanceOf(SignatureError);
  });

  it('signs a JWT in exactly the documented shape', async () => {
    const path = newPath('claims');
    const before = Math.floor(Date.now() / 1000);
    await main.client.publish({ url: urlOf(path), body: 'exact bytes', headers: { 'Content-Type': 'text/plain' } });
    await main.qstash.idle();
    const request = hits(path)[0]!;
    const jwt = request.headers.get('upstash-signature')!;

    expect(decodeProtectedHeader(jwt)).toEqual({ alg: 'HS256', typ: 'JWT' });
    const claims = decodeJwt(jwt);
    expect(Object.keys(claims)).toEqual(['iss', 'sub', 'exp', 'nbf', 'iat', 'jti', 'body']);
    expect(claims.iss).toBe('Upstash');
    expect(claims.sub).toBe(urlOf(path));
    expect(claims.iat).toBeGreaterThanOrEqual(before);
    expect(claims.nbf).toBe(claims.iat);
    expect(claims.exp).toBe(claims.iat! + 300);
    expect(claims.jti).toMatch(/^jwt_/);
    const digest = createHash('sha256').update('exact bytes').digest('base64').replace(/\+/g, '-').replace(/\//g, '_');
    expect(claims.body).toBe(digest);
    expect(request.body).toBe('exact bytes');
  });

  it('honours Upstash-Method and forwards headers without the Upstash-Forward- prefix', async () => {
    const path = newPath('put');
    await main.client.publish({
      url: urlOf(path),
      method: 'PUT',
      body: 'plain text',
      headers: { 'Content-Type': 'text/plain', 'X-Trace': 't1', 'Upstash-Forward-X-Raw': 'r1' },
    });
    await main.qstash.idle();
    const request = hits(path)[0]!;
    expect(request.method).toBe('PUT');
    expect(request.body).toBe('plain text');
    expect(request.headers.get('content-type')).toBe('text/plain');
    expect(request.headers.get('x-trace')).toBe('t1');
    expect(request.headers.get('x-raw')).toBe('r1');
    expect(request.headers.get('upstash-forward-x-raw')).toBeNull();
    await expect(verify(request)).resolves.toBe(true);
  });

  it('rotates keys: the next key signs, and receivers holding the old pair still verify', async () => {
    const running = await startQStash();
    try {
      const keys = await fetch(`${running.baseUrl}/v2/keys`, { headers: { Authorization: `Bearer ${token}` } });
      expect(await keys.json()).toEqual({ current: currentSigningKey, next: nextSigningKey });
      // The SDK has no call for rotation; this is QStash's REST endpoint.
      const rotated = await fetch(`${running.baseUrl}/v2/keys/rotate`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}` },
      });
      const newKeys = (await rotated.json()) as { current: string; next: string };
      expect(newKeys.current).toBe(nextSigningKey);
      expect(newKeys.next).toMatch(/^sig_/);
      expect(newKeys.next).not.toBe(currentSigningKey);
      expect(running.qstash.signingKeys()).toEqual(newKeys);

      const path = newPath('rotated');
      await running.client.publishJSON({ url: urlOf(path), body: { rotated: true } });
      await running.qstash.idle();
      const request = hits(path)[0]!;
      await expect(verify(request)).resolves.toBe(true);
      await expect(verify(request, { currentSigningKey: newKeys.current, nextSigningKey: newKeys.next })).resolves.toBe(true);
      await expect(verify(request, { currentSigningKey, nextSigningKey: currentSigningKey })).rejects.toBeInstanceOf(
        SignatureError,
      );
    } finally {
      await running.stop();
    }
  });

  it('publishes a batch (batchJSON) and delivers each message', async () => {
    const first = newPath('batch');
    const second = newPath('batch');
    const results = await main.client.batchJSON([
      { url: urlOf(first), body: { n: 1 } },
      { url: urlOf(second), body: { n: 2 }, headers: { 'X-Which': 'second' } },
    ]);
    expect(results).toHaveLength(2);
    const ids = results.map((result) => (result as { messageId: string }).messageId);
    expect(new Set(ids).size).toBe(2);
    await main.qstash.idle();
    const one = hits(first)[0]!;
    const two = hits(second)[0]!;
    expect(JSON.parse(one.body)).toEqual({ n: 1 });
    expect(JSON.parse(two.body)).toEqual({ n: 2 });
    expect(two.headers.get('x-which')).toBe('second');
    expect(two.headers.get('content-type')).toBe('application/json');
    expect([one.headers.get('upstash-message-id'), two.headers.get('upstash-message-id')]).toEqual(ids);
    await expect(verify(one)).resolves.toBe(true);
    await expect(verify(two)).resolves.toBe(true);
  });

  it('runs deliveries concurrently, but no more than the in-flight limit', async () => {
    const path = newPath('busy');
    let current = 0;
    let peak = 0;
    behaviours.set(path, async () => {
      current++;
      peak = Math.max(peak, current);
      await sleep(60);
      current--;
      return new Response('ok');
    });
    // More than the default limit (24) at once.
    await main.client.batchJSON(Array.from({ length: 40 }, (_, n) => ({ url: urlOf(path), body: { n } })));
    await main.qstash.idle();
    expect(hits(path)).toHaveLength(40);
    expect(peak).toBeGreaterThan(1);
    expect(peak).toBeLessThanOrEqual(24);
  });
});

describe('QStash devstack: retries, DLQ and callbacks', () => {
  it('retries a failing destination with backoff until it succeeds', async () => {
    const path = newPath('flaky');
    behaviours.set(path, (attempt) => new Response(attempt <= 2 ? 'down' : 'ok', { status: attempt <= 2 ? 500 : 200 }));
    const { messageId } = await main.client.publishJSON({ url: urlOf(path), body: { job: 'flaky' }, retries: 3 });
    await main.qstash.idle();

    const attempts = hits(path);
    expect(attempts).toHaveLength(3);
    expect(attempts.map((request) => request.headers.get('upstash-retried'))).toEqual(['0', '1', '2']);
    expect(attempts.every((request) => request.headers.get('upstash-message-id') === messageId)).toBe(true);
    for (const request of attempts) await expect(verify(request)).resolves.toBe(true);
    // backoffMs is 40 ms × retry number.
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(40);
    expect(attempts[2]!.at - attempts[1]!.at).toBeGreaterThanOrEqual(80);
    const dlq = await main.client.dlq.listMessages();
    expect(dlq.messages.find((message) => message.messageId === messageId)).toBeUndefined();
  });

  it('moves a message to the DLQ when retries run out, and calls the failure callback', async () => {
    const path = newPath('broken');
    const failurePath = newPath('failure');
    behaviours.set(path, () => new Response('nope', { status: 500, headers: { 'X-Why': 'broken' } }));
    const { messageId } = await main.client.publishJSON({
      url: urlOf(path),
      body: { n: 1 },
      retries: 2,
      failureCallback: urlOf(failurePath),
    });
    await main.qstash.idle();
    expect(hits(path)).toHaveLength(3);

    const { messages } = await main.client.dlq.listMessages();
    const dead = messages.find((message) => message.messageId === messageId);
    expect(dead).toMatchObject({
      messageId,
      url: urlOf(path),
      method: 'POST',
      body: '{"n":1}',
      maxRetries: 2,
      responseStatus: 500,
      responseBody: 'nope',
      header: { 'Content-Type': ['application/json'] },
    });
    expect(dead?.responseHeader?.['X-Why']).toEqual(['broken']);
    expect(dead?.dlqId).toMatch(/^\d+-\d+$/);

    const [callback, ...more] = hits(failurePath);
    expect(more).toHaveLength(0);
    expect(callback).toBeDefined();
    if (!callback || !dead) return;
    await expect(verify(callback)).resolves.toBe(true);
    expect(callback.headers.get('content-type')).toBe('application/json');
    expect(callback.headers.get('upstash-message-id')).not.toBe(messageId);
    const payload = JSON.parse(callback.body);
    expect(payload).toMatchObject({
      status: 500,
      retried: 2,
      maxRetries: 2,
      dlqId: dead.dlqId,
      sourceMessageId: messageId,
      url: urlOf(path),
      method: 'POST',
      sourceHeader: { 'Content-Type': ['application/json'] },
    });
    expect(decodeBase64(payload.body)).toBe('nope');
    expect(decodeBase64(payload.sourceBody)).toBe('{"n":1}');
    expect(payload.header['X-Why']).toEqual(['broken']);

    await expect(main.client.dlq.delete(dead.dlqId)).resolves.toEqual({ deleted: 1 });
    const after = await main.client.dlq.listMessages();
    expect(after.messages.find((message) => message.dlqId === dead.dlqId)).toBeUndefined();
    const again = main.client.dlq.delete(dead.dlqId);
    await expect(again).rejects.toBeInstanceOf(QstashError);
    await expect(again).rejects.toMatchObject({ status: 404 });
  });

  it('pages through the DLQ with a cursor, retries from it, and bulk-deletes it', async () => {
    const running = await startQStash();
    try {
      const path = newPath('dead');
      behaviours.set(path, () => new Response('no', { status: 503 }));
      const ids: string[] = [];
      for (let n = 0; n < 3; n++)
        ids.push((await running.client.publishJSON({ url: urlOf(path), body: { n }, retries: 0 })).messageId);
      await running.qstash.idle();

      const first = await running.client.dlq.listMessages({ count: 2 });
      expect(first.messages.map((message) => message.messageId)).toEqual(ids.slice(0, 2));
      expect(first.cursor).toBeTruthy();
      const second = await running.client.dlq.listMessages({ count: 2, cursor: first.cursor });
      expect(second.messages.map((message) => message.messageId)).toEqual(ids.slice(2));
      expect(second.cursor).toBeUndefined();

      behaviours.set(path, () => new Response('fixed'));
      const retried = await running.client.dlq.retry(first.messages[0]!.dlqId);
      expect(retried.responses).toHaveLength(1);
      await running.qstash.idle();
      const redelivered = hits(path).filter(
        (request) => request.headers.get('upstash-message-id') === retried.responses[0]!.messageId,
      );
      expect(redelivered).toHaveLength(1);
      expect(JSON.parse(redelivered[0]!.body)).toEqual({ n: 0 });

      await expect(running.client.dlq.delete({ all: true })).resolves.toMatchObject({ deleted: 2 });
      expect((await running.client.dlq.listMessages()).messages).toHaveLength(0);
    } finally {
      await running.stop();
    }
  });

  it('posts the callback payload after a successful delivery, signed', async () => {
    const path = newPath('answer');
    const callbackPath = newPath('callback');
    behaviours.set(path, () => Response.json({ done: true }, { headers: { 'X-Reply': 'yes' } }));
    const { messageId } = await main.client.publishJSON({
      url: urlOf(path),
      body: { job: 1 },
      callback: urlOf(callbackPath),
      headers: { 'Upstash-Callback-Forward-X-Token': 'cb-secret' },
    });
    await main.qstash.idle();

    const [callback, ...more] = hits(callbackPath);
    expect(more).toHaveLength(0);
    expect(callback).toBeDefined();
    if (!callback) return;
    await expect(verify(callback)).resolves.toBe(true);
    expect(callback.headers.get('x-token')).toBe('cb-secret');
    const payload = JSON.parse(callback.body);
    expect(payload).toMatchObject({
      status: 200,
      retried: 0,
      maxRetries: 3,
      sourceMessageId: messageId,
      url: urlOf(path),
      method: 'POST',
      sourceHeader: { 'Content-Type': ['application/json'] },
    });
    expect(JSON.parse(decodeBase64(payload.body))).toEqual({ done: true });
    expect(decodeBase64(payload.sourceBody)).toBe('{"job":1}');
    expect(payload.header['X-Reply']).toEqual(['yes']);
    expect(payload.dlqId).toBeUndefined();
    expect(typeof payload.createdAt).toBe('number');
  });

  it('calls the callback after every attempt, as QStash does, so retried/status tell them apart', async () => {
    const path = newPath('second-time');
    const callbackPath = newPath('callback');
    behaviours.set(path, (attempt) => new Response('x', { status: attempt === 1 ? 502 : 200 }));
    await main.client.publishJSON({ url: urlOf(path), body: {}, callback: urlOf(callbackPath) });
    await main.qstash.idle();
    const payloads = hits(callbackPath).map((request) => JSON.parse(request.body));
    expect(payloads.map((payload) => [payload.status, payload.retried]).sort()).toEqual([
      [200, 1],
      [502, 0],
    ]);
  });

  it('treats a destination that does not answer in time as a failure', async () => {
    const running = await startQStash({ deliveryTimeoutMs: 150 });
    try {
      const path = newPath('silent');
      behaviours.set(path, hang);
      const { messageId } = await running.client.publishJSON({ url: urlOf(path), body: {}, retries: 1 });
      await running.qstash.idle();
      expect(hits(path)).toHaveLength(2);
      const dead = (await running.client.dlq.listMessages()).messages.find((message) => message.messageId === messageId);
      expect(dead).toBeDefined();
      expect(dead?.responseStatus).toBeUndefined();

      // Upstash-Timeout overrides it per message: 1 s here, against the instance's 20 s.
      const stalledPath = newPath('stalled');
      behaviours.set(stalledPath, hang);
      const patient = await startQStash({ deliveryTimeoutMs: 20_000 });
      try {
        const started = Date.now();
        const short = await patient.client.publishJSON({ url: urlOf(stalledPath), body: {}, retries: 0, timeout: '1s' });
        await patient.qstash.idle();
        const elapsed = Date.now() - started;
        expect(elapsed).toBeGreaterThanOrEqual(1000);
        expect(elapsed).toBeLessThan(10_000);
        const dlq = (await patient.client.dlq.listMessages()).messages;
        expect(dlq.map((message) => message.messageId)).toEqual([short.messageId]);
      } finally {
        await patient.stop();
      }
    } finally {
      await running.stop();
    }
  });
});

describe('QStash devstack: publish options and the messages API', () => {
  it('drops a duplicate deduplication id, returning the first message id', async () => {
    const path = newPath('dedup');
    const first = await main.client.publishJSON({ url: urlOf(path), body: { n: 1 }, deduplicationId: 'dedup-a' });
    const second = await main.client.publishJSON({ url: urlOf(path), body: { n: 2 }, deduplicationId: 'dedup-a' });
    expect(first.deduplicated).toBeFalsy();
    expect(second).toMatchObject({ messageId: first.messageId, deduplicated: true });

    const contentA = await main.client.publishJSON({ url: urlOf(path), body: { same: true }, contentBasedDeduplication: true });
    const contentB = await main.client.publishJSON({ url: urlOf(path), body: { same: true }, contentBasedDeduplication: true });
    const contentC = await main.client.publishJSON({ url: urlOf(path), body: { same: false }, contentBasedDeduplication: true });
    expect(contentB).toMatchObject({ messageId: contentA.messageId, deduplicated: true });
    expect(contentC.messageId).not.toBe(contentA.messageId);
    expect(contentC.deduplicated).toBeFalsy();

    await main.qstash.idle();
    expect(hits(path).map((request) => JSON.parse(request.body))).toEqual([{ n: 1 }, { same: true }, { same: false }]);
  });

  it('holds a delayed message until its time', async () => {
    const path = newPath('later');
    const publishedAt = Date.now();
    const { messageId } = await main.client.publishJSON({ url: urlOf(path), body: { late: true }, delay: 1 });
    const message = await main.client.messages.get(messageId);
    expect(message.notBefore! - message.createdAt).toBe(1000);
    expect(message.url).toBe(urlOf(path));
    expect(message.body).toBe('{"late":true}');
    await sleep(500);
    expect(hits(path)).toHaveLength(0);

    await main.qstash.idle();
    const [request] = hits(path);
    expect(request).toBeDefined();
    expect(request!.at).toBeGreaterThanOrEqual(message.notBefore!);
    expect(request!.at - publishedAt).toBeGreaterThanOrEqual(1000);
    await expect(main.client.messages.get(messageId)).rejects.toMatchObject({ status: 404 });
  });

  it('cancels a pending message (Upstash-Not-Before) so it is never delivered', async () => {
    const path = newPath('cancelled');
    const notBefore = Math.floor(Date.now() / 1000) + 60;
    const { messageId } = await main.client.publishJSON({ url: urlOf(path), body: {}, notBefore });
    const message = await main.client.messages.get(messageId);
    expect(message.notBefore).toBe(notBefore * 1000);

    await expect(main.client.messages.cancel(messageId)).resolves.toEqual({ cancelled: 1 });
    await expect(main.client.messages.get(messageId)).rejects.toMatchObject({ status: 404 });
    await expect(main.client.messages.cancel(messageId)).rejects.toMatchObject({ status: 404 });
    await main.qstash.idle();
    expect(hits(path)).toHaveLength(0);
  });

  it('rejects a wrong token with 401 and QStash error JSON, and bad input with 400', async () => {
    const path = newPath('never');
    const stranger = new Client({ baseUrl: main.baseUrl, token: 'wrong-token', retry: false });
    const unauthorized = stranger.publishJSON({ url: urlOf(path), body: {} });
    await expect(unauthorized).rejects.toBeInstanceOf(QstashError);
    const error = (await unauthorized.catch((e: unknown) => e)) as QstashError;
    expect(error.status).toBe(401);
    expect(JSON.parse(error.message)).toEqual({ error: expect.any(String) });

    await expect(main.client.publishJSON({ url: 'ftp://example.com/x', body: {} })).rejects.toMatchObject({ status: 400 });
    const badDelay = main.client.publishJSON({ url: urlOf(path), body: {}, delay: 'soon' as '1s' });
    await expect(badDelay).rejects.toMatchObject({ status: 400, message: expect.stringContaining('Upstash-Delay') });
    const badRetries = main.client.publish({ url: urlOf(path), body: 'x', headers: { 'Upstash-Retries': '-1' } });
    await expect(badRetries).rejects.toMatchObject({ status: 400, message: expect.stringContaining('Upstash-Retries') });
    const badBatch = main.client.batchJSON([
      { url: urlOf(path), body: {} },
      { url: 'not a url', body: {} },
    ]);
    await expect(badBatch).rejects.toMatchObject({ status: 400, message: expect.stringContaining('batch[1]') });

    await main.qstash.idle();
    expect(hits(path)).toHaveLength(0);
  });
});

describe('QStash devstack: flow control', () => {
  /** A destination that answers after `ms`, noting how many of its requests were open at once. */
  function slowDestination(path: string, ms: number) {
    const state = { open: 0, peak: 0 };
    behaviours.set(path, async () => {
      state.open++;
      state.peak = Math.max(state.peak, state.open);
      await sleep(ms);
      state.open--;
      return new Response('ok');
    });
    return state;
  }
  const flowKey = (name: string) => `${name}-${randomUUID()}`;

  it('runs at most `parallelism` deliveries of a key at once, while other keys and unkeyed messages go on', async () => {
    const [heavy, other, plain] = [newPath('lane-heavy'), newPath('lane-other'), newPath('lane-plain')];
    const heavyState = slowDestination(heavy, 80);
    const otherState = slowDestination(other, 80);
    const plainState = slowDestination(plain, 80);
    const [heavyKey, otherKey] = [flowKey('heavy'), flowKey('other')];
    await main.client.batchJSON(
      Array.from({ length: 12 }, (_, n) => ({ url: urlOf(heavy), body: { n }, flowControl: { key: heavyKey, parallelism: 2 } })),
    );
    // Published after the twelve: neither waits behind them.
    await main.client.batchJSON([
      ...Array.from({ length: 4 }, (_, n) => ({
        url: urlOf(other),
        body: { n },
        flowControl: { key: otherKey, parallelism: 3 },
      })),
      ...Array.from({ length: 6 }, (_, n) => ({ url: urlOf(plain), body: { n } })),
    ]);
    await until(() => hits(other).length === 4 && hits(plain).length === 6, 'the other key and the unkeyed messages');
    expect(hits(heavy).length).toBeLessThan(12);
    await main.qstash.idle();

    expect(hits(heavy)).toHaveLength(12);
    expect(heavyState.peak).toBe(2);
    expect(otherState.peak).toBe(3);
    // Unkeyed messages are limited only by the devstack's own in-flight limit.
    expect(plainState.peak).toBe(6);
    // Started in the order published; two under way at once may reach the destination in either order (a CI run
    // saw 5 arrive before 4), so each arrives at most one place from its own, never further.
    const arrived = hits(heavy).map((request) => JSON.parse(request.body).n as number);
    expect([...arrived].sort((a, b) => a - b)).toEqual([...Array(12).keys()]);
    expect(Math.max(...arrived.map((n, place) => Math.abs(n - place))), `${arrived}`).toBeLessThan(2);
  });

  it('starts at most `rate` deliveries of a key per period', async () => {
    const path = newPath('rated');
    const key = flowKey('rated');
    await main.client.batchJSON(
      Array.from({ length: 5 }, (_, n) => ({
        url: urlOf(path),
        body: { n },
        flowControl: { key, rate: 2, period: '1s' as const },
      })),
    );
    await main.qstash.idle();
    const times = hits(path).map((request) => request.at);
    expect(times).toHaveLength(5);
    // Deliveries n and n+2 fall in different one-second windows. Arrival times lag their start by a
    // little each, so allow some of that lag to differ between the two.
    for (let n = 0; n + 2 < times.length; n++) expect(times[n + 2]! - times[n]!).toBeGreaterThanOrEqual(800);
  });

  it('reports a key through the SDK: its wait list, limits and deliveries under way', async () => {
    const path = newPath('held');
    const key = flowKey('held');
    const releases: (() => void)[] = [];
    behaviours.set(path, () => new Promise<Response>((resolve) => releases.push(() => resolve(new Response('ok')))));
    await main.client.batchJSON(
      Array.from({ length: 5 }, (_, n) => ({ url: urlOf(path), body: { n }, flowControl: { key, parallelism: 2, rate: 100 } })),
    );
    await until(() => releases.length === 2, 'two deliveries under way');
    const info = await main.client.flowControl.get(key);
    expect(info).toMatchObject({
      flowControlKey: key,
      waitListSize: 3,
      parallelismMax: 2,
      parallelismCount: 2,
      rateMax: 100,
      rateCount: 2,
      ratePeriod: 1,
    });
    const message = await main.client.messages.get(hits(path)[0]!.headers.get('upstash-message-id')!);
    expect(message).toMatchObject({ flowControlKey: key, parallelism: 2, rate: 100, period: 1 });
    while (hits(path).length < 5 || releases.length > 0) {
      releases.shift()?.();
      await sleep(10);
    }
    await main.qstash.idle();
    expect((await main.client.flowControl.get(key)).waitListSize).toBe(0);
  });

  it('refuses a key with characters QStash does not allow, and a key without limits', async () => {
    const path = newPath('never');
    const badKey = main.client.publishJSON({ url: urlOf(path), body: {}, flowControl: { key: 'user 1/ingest', parallelism: 1 } });
    await expect(badKey).rejects.toMatchObject({ status: 400, message: expect.stringContaining('Upstash-Flow-Control-Key') });
    const noLimits = main.client.publish({
      url: urlOf(path),
      body: 'x',
      headers: { 'Upstash-Flow-Control-Key': 'user-1', 'Upstash-Flow-Control-Value': 'parallelism=0' },
    });
    await expect(noLimits).rejects.toMatchObject({ status: 400, message: expect.stringContaining('Upstash-Flow-Control-Value') });
    await main.qstash.idle();
    expect(hits(path)).toHaveLength(0);
  });
});

describe('QStash devstack: persistence', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'qstash-state-'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('keeps pending messages, the DLQ, dedup ids and rotated keys across stop and start', async () => {
    const stateFile = join(dir, 'nested', 'qstash.json');
    const failPath = newPath('persist-fail');
    const laterPath = newPath('persist-later');
    const stuckPath = newPath('persist-stuck');
    behaviours.set(failPath, () => new Response('bad', { status: 500 }));
    behaviours.set(stuckPath, (attempt) => (attempt === 1 ? hang() : new Response('ok')));

    const first = await startQStash({ stateFile });
    const rotated = await fetch(`${first.baseUrl}/v2/keys/rotate`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}` },
    });
    const keys = (await rotated.json()) as { current: string; next: string };
    const failed = await first.client.publishJSON({ url: urlOf(failPath), body: { f: 1 }, retries: 0 });
    await first.qstash.idle();
    const later = await first.client.publishJSON({
      url: urlOf(laterPath),
      body: { l: 1 },
      delay: 1,
      deduplicationId: 'persist-1',
    });
    const stuck = await first.client.publishJSON({ url: urlOf(stuckPath), body: { s: 1 }, retries: 0 });
    await until(() => hits(stuckPath).length === 1, 'the first attempt to reach the stuck destination');
    await first.stop();
    expect(hits(laterPath)).toHaveLength(0);

    const second = await startQStash({ stateFile });
    try {
      expect(second.qstash.signingKeys()).toEqual(keys);
      await expect(second.client.messages.get(later.messageId)).resolves.toMatchObject({ url: urlOf(laterPath) });
      const dlq = await second.client.dlq.listMessages();
      expect(dlq.messages.map((message) => message.messageId)).toContain(failed.messageId);
      const duplicate = await second.client.publishJSON({ url: urlOf(laterPath), body: { l: 2 }, deduplicationId: 'persist-1' });
      expect(duplicate).toMatchObject({ messageId: later.messageId, deduplicated: true });

      await second.qstash.idle();
      const [delivered, ...extra] = hits(laterPath);
      expect(extra).toHaveLength(0);
      expect(delivered?.headers.get('upstash-message-id')).toBe(later.messageId);
      expect(JSON.parse(delivered!.body)).toEqual({ l: 1 });
      const rotatedKeys = { currentSigningKey: keys.current, nextSigningKey: keys.next };
      await expect(verify(delivered!, rotatedKeys)).resolves.toBe(true);

      // At least once: the attempt cut off by the stop is made again, not counted as a retry.
      const attempts = hits(stuckPath);
      expect(attempts).toHaveLength(2);
      expect(attempts.map((request) => request.headers.get('upstash-message-id'))).toEqual([stuck.messageId, stuck.messageId]);
      expect(attempts.map((request) => request.headers.get('upstash-retried'))).toEqual(['0', '0']);
    } finally {
      await second.stop();
    }
  });

  it('refuses a state file that is not its own, rather than starting empty', async () => {
    const stateFile = join(dir, 'garbage.json');
    await writeFile(stateFile, '{ not json');
    expect(() => createQStashServer({ token, currentSigningKey, nextSigningKey, stateFile })).toThrow(/not valid JSON/);
    await writeFile(stateFile, '{"version": 7}');
    expect(() => createQStashServer({ token, currentSigningKey, nextSigningKey, stateFile })).toThrow(
      /not a QStash devstack state file/,
    );
  });
});

describe('QStash devstack: header grammar', () => {
  it('parses QStash durations', () => {
    expect(parseDuration('10s')).toBe(10_000);
    expect(parseDuration('2m')).toBe(120_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('1d')).toBe(86_400_000);
    expect(parseDuration('5')).toBe(5000);
    expect(parseDuration('soon')).toBeUndefined();
    expect(parseDuration('10x')).toBeUndefined();
  });

  it('evaluates Upstash-Retry-Delay expressions in retried, and rejects bad ones', () => {
    expect(compileRetryDelay('1000')(3)).toBe(1000);
    expect(compileRetryDelay('1000 * (1 + retried)')(2)).toBe(3000);
    expect(compileRetryDelay('pow(2, retried) * 1000')(3)).toBe(8000);
    expect(compileRetryDelay('max(1000, min(5000, pow(10, retried)))')(4)).toBe(5000);
    expect(compileRetryDelay('-5')(0)).toBe(0);
    expect(compileRetryDelay('exp(100)')(0)).toBe(86_400_000);
    expect(() => compileRetryDelay('process.exit()')).toThrow(/unknown name/);
    expect(() => compileRetryDelay('pow(2)')).toThrow(/argument/);
    expect(() => compileRetryDelay('1 +')).toThrow(/unexpected end/);
    expect(() => compileRetryDelay('')).toThrow(/empty/);
  });
});
