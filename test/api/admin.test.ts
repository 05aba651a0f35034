import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, db, makeAdmin, type Schema, signUp, stack, type TestUser } from '../support/client.ts';
import { ingestFile, queuedJob, waitForJob } from '../support/ingest.ts';

/**
 * The admin page's API against the real workers: counts (the dead-letter queue read from the devstack's QStash),
 * users with their usage, every user's stuck and failed jobs, and a retry that really runs the job again.
 */

type AdminJob = Schema<'AdminJob'>;
type AdminUser = Schema<'AdminUser'>;

let owner: TestUser;
let admin: TestUser;
let collectionId: string;

beforeAll(async () => {
  [owner, admin] = await Promise.all([signUp('admin-owner'), signUp('admin-admin').then(makeAdmin)]);
  const created = await api('POST', '/collections/', { token: owner.token, body: { name: 'Admin page' } });
  expect(created.status).toBe(200);
  collectionId = created.body.id as string;
  await ingestFile(owner.token, 'keeper.txt', collectionId, 'The keeper of the Marrow Island light trimmed the wick at dusk.');
}, 120_000);

/** A job whose messages were lost: queued, and untouched for two hours. */
async function stuckUrlJob() {
  const job = await queuedJob(owner.id, collectionId, `${stack.pagesUrl}/article.html`);
  await db()`update ingest_jobs set updated_at = now() - interval '2 hours' where id = ${job.jobId}`;
  return job;
}

/** A job that failed, as failJob leaves it: its document removed, its error kept. */
async function failedJob(url?: string) {
  const job = await queuedJob(owner.id, collectionId, url);
  await db()`update ingest_jobs set status = 'failed', error_message = 'The page could not be read' where id = ${job.jobId}`;
  await db()`delete from documents where id = ${job.documentId}`;
  return job;
}

const jobsOf = async (state: 'stuck' | 'failed') => {
  const response = await api('GET', `/admin/jobs?state=${state}&limit=200`, { token: admin.token });
  expect(response.status).toBe(200);
  return response.body as AdminJob[];
};

describe('the admin overview', () => {
  it('counts accounts, collections, documents and jobs, and reads the dead-letter queue', async () => {
    await stuckUrlJob();
    const response = await api('GET', '/admin/overview', { token: admin.token });
    expect(response.status).toBe(200);
    const overview = response.body as Schema<'AdminOverview'>;
    expect(overview.users).toBeGreaterThanOrEqual(2);
    expect(overview.collections).toBeGreaterThanOrEqual(1);
    expect(overview.documents).toBeGreaterThanOrEqual(1);
    expect(overview.jobs.stuck).toBeGreaterThanOrEqual(1);
    expect(overview.stuck_after_minutes).toBe(15);
    // The devstack's QStash answers GET /v2/dlq as QStash does: a count, not null.
    expect(overview.dead_letters).toEqual({ count: expect.any(Number), more: false });
  });
});

describe('users and their usage', () => {
  it('lists each account with what it owns and its usage, matching GET /usage', async () => {
    const response = await api('GET', '/admin/users?limit=200', { token: admin.token });
    expect(response.status).toBe(200);
    const row = (response.body as AdminUser[]).find((user) => user.id === owner.id);
    // The uploaded file, and the documents of the jobs other tests left queued.
    const [held] = await db()<{ documents: number }[]>`
      select count(*)::int as documents from documents where user_id = ${owner.id} and deleting_at is null`;
    expect(held?.documents).toBeGreaterThanOrEqual(1);
    expect(row).toMatchObject({ email: owner.email, is_admin: false, collections: 1, documents: held?.documents });
    const me = (response.body as AdminUser[]).find((user) => user.id === admin.id);
    expect(me?.is_admin).toBe(true);
    const usage = await api('GET', '/usage?group_by=user', { token: admin.token });
    const mine = (usage.body.rows as { group: string | null; input_tokens: number; calls: number }[]).filter(
      (r) => r.group === owner.id,
    );
    expect(row?.input_tokens).toBe(mine.reduce((sum, r) => sum + r.input_tokens, 0));
    expect(row?.calls).toBe(mine.reduce((sum, r) => sum + r.calls, 0));
  });

  it('checks the window as GET /usage does', async () => {
    const response = await api('GET', '/admin/users?since=2026-01-01&until=2025-01-01', { token: admin.token });
    expect(response.status).toBe(422);
  });
});

describe('stuck and failed jobs', () => {
  it('a stuck job is listed with its owner and collection, and a retry runs it to the end', async () => {
    const { jobId } = await stuckUrlJob();
    const listed = (await jobsOf('stuck')).find((job) => job.job_id === jobId);
    expect(listed).toMatchObject({
      user_id: owner.id,
      user_email: owner.email,
      collection_id: collectionId,
      collection_name: 'Admin page',
      status: 'queued',
      retryable: true,
      retry_note: null,
    });

    const retried = await api('POST', `/admin/jobs/${jobId}/retry`, { token: admin.token });
    expect(retried.status).toBe(202);
    expect(retried.body).toEqual({ job_id: jobId, status: 'queued', retried: 'requeued' });
    // No longer stuck: stamped at once, so a second click is refused rather than queued twice.
    expect((await jobsOf('stuck')).some((job) => job.job_id === jobId)).toBe(false);
    const again = await api('POST', `/admin/jobs/${jobId}/retry`, { token: admin.token });
    expect(again.status).toBe(409);

    const done = await waitForJob(owner.token, jobId);
    expect(done.status).toBe('succeeded');
    expect(done.chunks_total).toBeGreaterThan(0);

    const requestId = retried.headers.get('x-request-id') as string;
    const [entry] = await db()<{ actor_id: string; action: string; target_id: string; diff: Record<string, unknown> }[]>`
      select actor_id, action, target_id, diff from audit_log where request_id = ${requestId}`;
    expect(entry).toEqual({
      actor_id: admin.id,
      action: 'job.retried',
      target_id: jobId,
      diff: { retried: 'requeued', status: 'queued' },
    });
  });

  it('a failed URL job is ingested again as a new job of its owner', async () => {
    const { jobId } = await failedJob(`${stack.pagesUrl}/article.html`);
    const listed = (await jobsOf('failed')).find((job) => job.job_id === jobId);
    expect(listed).toMatchObject({ status: 'failed', error_message: 'The page could not be read', retryable: true });

    const retried = await api('POST', `/admin/jobs/${jobId}/retry`, { token: admin.token });
    expect(retried.status).toBe(202);
    expect(retried.body).toMatchObject({ status: 'queued', retried: 'reingested' });
    const newJob = retried.body.job_id as string;
    expect(newJob).not.toBe(jobId);
    // The owner's job, in the same collection: they watch it, and its document is theirs.
    const done = await waitForJob(owner.token, newJob);
    expect(done).toMatchObject({ status: 'succeeded', collection_id: collectionId });
  });

  it('a failed upload cannot be retried, and says why', async () => {
    const { jobId } = await failedJob();
    const listed = (await jobsOf('failed')).find((job) => job.job_id === jobId);
    expect(listed).toMatchObject({ retryable: false, source: 'queued.txt' });
    expect(listed?.retry_note).toContain('uploaded again');
    const retried = await api('POST', `/admin/jobs/${jobId}/retry`, { token: admin.token });
    expect(retried.status).toBe(409);
    expect(retried.body.detail).toContain('uploaded again');
  });

  it('a job that does not exist is 404, and a malformed state 422', async () => {
    expect((await api('POST', `/admin/jobs/${randomUUID()}/retry`, { token: admin.token })).status).toBe(404);
    expect((await api('POST', '/admin/jobs/not-a-job/retry', { token: admin.token })).status).toBe(404);
    expect((await api('GET', '/admin/jobs?state=lost', { token: admin.token })).status).toBe(422);
  });

  it('a job is only the admin’s to retry: its owner gets 403', async () => {
    const { jobId } = await stuckUrlJob();
    expect((await api('POST', `/admin/jobs/${jobId}/retry`, { token: owner.token })).status).toBe(403);
    expect((await api('GET', '/admin/jobs?state=stuck', { token: owner.token })).status).toBe(403);
  });
});
