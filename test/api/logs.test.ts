import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { readQueryStream } from '../../client/index.ts';
import { api, signUp, stack, type TestUser } from '../support/client.ts';
import { upload, waitForJob } from '../support/ingest.ts';

// One JSON line per event (src/core/log.ts), and one request id from the API through the ingest worker
// (an upload's steps) and the scoring worker (its answer's scoring), read back from each worker's output.

interface LogLine {
  worker: string;
  request_id: string;
  event: string;
  level: string;
  [field: string]: unknown;
}

/** The structured lines a worker wrote; wrangler's own output around them is not JSON and is left out. */
async function logLines(worker: 'api' | 'ingest' | 'scoring'): Promise<LogLine[]> {
  const file = stack.logFiles[worker];
  if (!file) throw new Error(`no log file for the ${worker} worker`);
  const lines: LogLine[] = [];
  for (const text of (await readFile(file, 'utf8')).split('\n')) {
    const start = text.indexOf('{"time"');
    if (start < 0) continue;
    try {
      lines.push(JSON.parse(text.slice(start)) as LogLine);
    } catch {
      // a line cut by another process's output; not ours to judge
    }
  }
  return lines;
}

async function until<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await check();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`not seen within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const withId = (lines: LogLine[], id: string) => lines.filter((line) => line.request_id === id);

let user: TestUser;
let collectionId: string;
// Words that appear nowhere but in the uploaded document.
const marker = `quokka-${randomUUID().slice(0, 8)}`;
const documentText = `The ${marker} lighthouse keeper logs the tides at dawn. ${marker} tides rise twice a day near the ${marker} pier.`;
let uploadId: string;
let answerId: string;

beforeAll(async () => {
  user = await signUp('logs');
  const created = await api('POST', '/collections/', { token: user.token, body: { name: 'Logged' } });
  collectionId = created.body.id;

  const uploaded = await upload(user.token, 'tides.txt', documentText, collectionId);
  expect(uploaded.status).toBe(200);
  uploadId = uploaded.headers.get('x-request-id') as string;
  expect((await waitForJob(user.token, uploaded.body.job_id)).status).toBe('succeeded');

  const response = await fetch(`${stack.apiUrl}/query/`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${user.token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ question: `When does the ${marker} keeper log the tides?`, collection_id: collectionId }),
  });
  expect(response.status).toBe(200);
  answerId = response.headers.get('x-request-id') as string;
  for await (const _event of readQueryStream(response.body as ReadableStream<Uint8Array>)) {
    // read to the end: the answer is recorded, then queued for scoring
  }
}, 120_000);

describe('structured logs', () => {
  it("carry an upload's request id from the API into every ingest step", async () => {
    const api = withId(await logLines('api'), uploadId);
    expect(api).toContainEqual(
      expect.objectContaining({ worker: 'api', event: 'request', method: 'POST', status: 200, user_id: user.id }),
    );
    const steps = await until(async () => {
      const lines = withId(await logLines('ingest'), uploadId).filter((line) => line.event === 'delivery');
      return lines.length > 0 ? lines : undefined;
    }, 'the ingest worker logging the upload');
    expect(steps.every((line) => line.worker === 'ingest' && line.path === '/steps' && typeof line.job_id === 'string')).toBe(
      true,
    );
  });

  it("carry an answer's request id from the API into its scoring", async () => {
    expect(withId(await logLines('api'), answerId)).toContainEqual(
      expect.objectContaining({
        worker: 'api',
        event: 'request',
        route: expect.stringMatching(/^\/query\/?$/),
        user_id: user.id,
      }),
    );
    const scored = await until(async () => {
      const lines = withId(await logLines('scoring'), answerId).filter((line) => line.event === 'delivery');
      return lines.length > 0 ? lines : undefined;
    }, 'the scoring worker logging the answer');
    expect(scored[0]).toMatchObject({ worker: 'scoring', path: '/score', outcome: 'scored' });
    expect(typeof scored[0]?.evaluation_id).toBe('string');
  });

  it("count QStash's dead-letter queue at each worker's scheduled sweep", async () => {
    for (const [worker, url] of [
      ['ingest', stack.ingestUrl],
      ['scoring', stack.scoringUrl],
    ] as const) {
      const before = (await logLines(worker)).filter((line) => line.event === 'dead_letters').length;
      const response = await fetch(`${url}/__scheduled?cron=${encodeURIComponent('*/15 * * * *')}`);
      expect(response.ok).toBe(true);
      const counted = await until(async () => {
        const lines = (await logLines(worker)).filter((line) => line.event === 'dead_letters');
        return lines.length > before ? lines.at(-1) : undefined;
      }, `the ${worker} sweep's dead-letter count`);
      expect(counted).toMatchObject({ worker, level: expect.stringMatching(/^(info|warn)$/), more: false });
      expect(counted?.count).toBeGreaterThanOrEqual(0);
      expect(counted?.level).toBe((counted?.count as number) > 0 ? 'warn' : 'info');
      // The sweep's own line, under the same request id, a new one of its own.
      await until(async () => {
        const events = withId(await logLines(worker), counted?.request_id as string).map((line) => line.event);
        return events.includes('sweep') ? true : undefined;
      }, `the ${worker} sweep's line`);
    }
  });

  it('hold no secret and no document text, in any worker', async () => {
    const secrets = {
      'the service role key': stack.serviceRoleKey,
      'the QStash token': stack.qstashToken,
      'the current signing key': stack.qstashSigningKeys.current,
      'the next signing key': stack.qstashSigningKeys.next,
      'the vector token': stack.vectorToken,
      'the model key': stack.modelApiKey,
      'the database URL': stack.workerDatabaseUrls.api,
      "the user's token": user.token,
      "the user's refresh token": user.refreshToken,
      'the document': marker,
      ...(stack.apiVars.UPSTASH_REDIS_REST_TOKEN ? { 'the Redis token': stack.apiVars.UPSTASH_REDIS_REST_TOKEN } : {}),
    };
    for (const worker of ['api', 'ingest', 'scoring'] as const) {
      expect((await logLines(worker)).length).toBeGreaterThan(0);
      // The whole output, wrangler's own lines too (it shows settings as "(hidden)").
      const text = await readFile(stack.logFiles[worker] as string, 'utf8');
      for (const [name, value] of Object.entries(secrets)) {
        expect(value.length, name).toBeGreaterThan(3);
        expect(text.includes(value), `${name} in the ${worker} worker's log`).toBe(false);
      }
    }
  });
});
