import { describe, expect, it } from 'vitest';
import type { Queue, QueuedMessage } from '#core/adapters/queue.ts';
import { createLogger, secretsOf } from '#core/log.ts';
import { messageIds, requestIdOf, tracedQueue } from '#core/messages/request-id.ts';

function captured(secrets: string[] = []) {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const log = createLogger(
    { worker: 'ingest', request_id: 'req-1' },
    {
      secrets,
      write: (line) => {
        raw.push(line);
        lines.push(JSON.parse(line));
      },
    },
  );
  return { log, lines, raw };
}

describe('the structured logger', () => {
  it('writes one JSON line per event, with the worker, the request id and the fields it was given', () => {
    const { log, lines } = captured();
    log.with({ user_id: 'u1' }).info('delivery', { job_id: 'j1', ms: 12 });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'info',
      event: 'delivery',
      worker: 'ingest',
      request_id: 'req-1',
      user_id: 'u1',
      job_id: 'j1',
      ms: 12,
    });
    expect(typeof lines[0]?.time).toBe('string');
  });

  it("logs an error's name, message, code and cause, cut short", () => {
    const { log, lines } = captured();
    const error = Object.assign(new Error('x'.repeat(1000), { cause: new TypeError('inner') }), { code: 'ECONNRESET' });
    log.error('delivery_failed', error);
    const logged = lines[0]?.error as { name: string; message: string; code: string; cause: { name: string } };
    expect(logged.name).toBe('Error');
    expect(logged.message.length).toBe(300);
    expect(logged.code).toBe('ECONNRESET');
    expect(logged.cause.name).toBe('TypeError');
  });

  it('blanks the secrets it was given and anything shaped like a token or key', () => {
    const secret = 'qstash-token-"with\\quotes"';
    const jwt = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1MSJ9.c2lnbmF0dXJl';
    const { log, raw } = captured([secret]);
    log.error('failed', new Error(`upstream said ${secret} for Bearer abc.def and ${jwt}`), {
      key: 'rag_AAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      hook: 'whsec_BBBBBBBBBBBB',
    });
    const line = raw[0] as string;
    expect(line).not.toContain('qstash-token');
    expect(line).not.toContain('abc.def');
    expect(line).not.toContain(jwt);
    expect(line).not.toContain('rag_AAAA');
    expect(line).not.toContain('whsec_BBBB');
    expect(line).toContain('[redacted]');
  });

  it("takes a worker's keys, tokens and database URL as its secrets", () => {
    expect(
      secretsOf({
        QSTASH_TOKEN: 't',
        SUPABASE_SERVICE_ROLE_KEY: 'k',
        CHAT_MODEL: 'gpt',
        HYPERDRIVE: { connectionString: 'postgres://u:p@h/db' },
      }).sort(),
    ).toEqual(['k', 'postgres://u:p@h/db', 't']);
  });
});

describe('the request id in QStash messages', () => {
  it('is added to every message a traced queue publishes, and left as it is where a message has one', async () => {
    const published: QueuedMessage<unknown>[] = [];
    const queue: Queue = { ready: async () => {}, publish: async (messages) => void published.push(...messages) };
    await tracedQueue(queue, 'req-9').publish([
      { destination: 'http://w/steps', body: { job_id: 'j' }, deduplicationId: 'a' },
      { destination: 'http://w/steps', body: { job_id: 'k', request_id: 'earlier' }, deduplicationId: 'b' },
    ]);
    expect(published.map((m) => m.body)).toEqual([
      { job_id: 'j', request_id: 'req-9' },
      { job_id: 'k', request_id: 'earlier' },
    ]);
  });

  it("is read from a delivery's body, and from the message a failure callback reports on", () => {
    const message = JSON.stringify({ job_id: 'j', step: 'extract', request_id: 'req-2' });
    expect(requestIdOf(message)).toBe('req-2');
    const callback = JSON.stringify({ sourceBody: Buffer.from(message).toString('base64'), retried: 3 });
    expect(requestIdOf(callback)).toBe('req-2');
    expect(messageIds(callback)).toEqual({ job_id: 'j' });
    expect(requestIdOf(JSON.stringify({ job_id: 'j' }))).toBeUndefined();
    expect(requestIdOf(JSON.stringify({ request_id: 'has spaces and "quotes"' }))).toBeUndefined();
  });
});
