import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { DAILY_INGEST_CHUNKS } from '#core/limits.ts';
import { api, db, signUp, type TestUser } from '../support/client.ts';
import { chunkRows, documentOfJob, upload, waitForJob } from '../support/ingest.ts';

// The per-user daily quota, with the default setting: the test spends most of a user's day by
// writing the usage rows an earlier day's extract steps would have written.
const QUOTA = DAILY_INGEST_CHUNKS;

/** About `sentences` × 60 characters of distinct text: several 1,000-character chunks. */
const text = (label: string, sentences: number) =>
  Array.from({ length: sentences }, (_, i) => `Sentence ${i} of ${label} talks about topic number ${i * 7}.`).join(' ');

async function spend(user: TestUser, chunks: number) {
  await db()`insert into ingest_usage (job_id, range_start, user_id, chunks) values (${randomUUID()}, 1, ${user.id}, ${chunks})`;
}

async function usage(user: TestUser) {
  const [row] = await db()<{ used: number }[]>`
    select coalesce(sum(chunks), 0)::int as used from ingest_usage where user_id = ${user.id}`;
  return row?.used ?? -1;
}

async function documentCount(user: TestUser) {
  const [row] = await db()<{ count: number }[]>`select count(*)::int as count from documents where user_id = ${user.id}`;
  return row?.count ?? -1;
}

describe('the per-user daily ingestion quota', () => {
  let user: TestUser;
  beforeAll(async () => {
    user = await signUp('quota');
  });

  it('keeps the chunks that fit, ends the document partial saying why, and counts what it kept', async () => {
    await spend(user, QUOTA - 2);
    const created = await upload(user.token, 'long.txt', text('long', 120));
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const job = await waitForJob(user.token, created.body.job_id);
    expect(job).toMatchObject({ status: 'partial', chunks_total: 2, chunks_processed: 2 });
    expect(job.error_message).toContain('daily ingestion quota of 100,000 chunks was reached');
    expect(job.error_message).toContain('only the first 2 chunks');
    const documentId = await documentOfJob(job.job_id);
    expect((await chunkRows(documentId as string)).length).toBe(2);
    expect(await usage(user)).toBe(QUOTA);
  });

  it('then refuses uploads and URLs with 429 and Retry-After until 00:00 UTC, leaving nothing behind', async () => {
    const before = await documentCount(user);
    const refused = await upload(user.token, 'more.txt', text('more', 10));
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'quota_exceeded' });
    expect(refused.body.detail).toContain('resets at 00:00 UTC');

    const byUrl = await api('POST', '/ingest/url', { token: user.token, body: { url: 'https://example.com/a' } });
    expect(byUrl.status).toBe(429);
    const retryAfter = Number(byUrl.headers.get('retry-after'));
    const untilMidnight =
      (Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1) - Date.now()) / 1000;
    expect(retryAfter).toBeGreaterThan(0);
    expect(Math.abs(retryAfter - untilMidnight)).toBeLessThan(120);
    expect(await documentCount(user)).toBe(before);
  });

  it('is per user: someone else still ingests', async () => {
    const other = await signUp('quota-other');
    const created = await upload(other.token, 'fine.txt', text('fine', 10));
    expect(created.status).toBe(200);
    expect(await waitForJob(other.token, created.body.job_id)).toMatchObject({ status: 'succeeded' });
  });

  it('two documents racing for the last chunk: one keeps it, the other fails saying why', async () => {
    const racer = await signUp('quota-race');
    await spend(racer, QUOTA - 1);
    const [a, b] = await Promise.all([
      upload(racer.token, 'a.txt', text('first', 60)),
      upload(racer.token, 'b.txt', text('second', 60)),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const jobs = await Promise.all([waitForJob(racer.token, a.body.job_id), waitForJob(racer.token, b.body.job_id)]);
    const outcomes = jobs.map((job) => `${job.status}:${job.chunks_total}`).sort();
    expect(outcomes).toEqual(['failed:0', 'partial:1']);
    const failed = jobs.find((job) => job.status === 'failed');
    expect(failed?.error_message).toContain('was reached before this document could be read');
    expect(await usage(racer)).toBe(QUOTA);
  });
});
