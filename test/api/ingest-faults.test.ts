import { Client } from '@upstash/qstash';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { signDelivery } from '../../devstack/qstash/signature.ts';
import { api, db, skipRealPostgres, stack } from '../support/client.ts';
import { faultCounts } from '../support/faults.ts';
import { type Cast, castWithCollection } from '../support/fixtures.ts';
import {
  chunkRows,
  clearFaults,
  documentOfJob,
  ingestFile,
  injectFault,
  objectsUnder,
  upload,
  vectorIndex,
  waitForJob,
} from '../support/ingest.ts';
import { askQuestion, dataOf } from '../support/sse.ts';

// Outages are injected into the shared devstack, so these run in the project whose
// other files never ingest (see test/vitest.config.ts).
let cast: Cast;
let collectionId: string;

beforeAll(async () => {
  if (skipRealPostgres) return;
  ({ cast, collectionId } = await castWithCollection('Faults'));
});
afterEach(() => clearFaults());

const rowsOf = async (userId: string) => {
  const [row] = await db()<{ jobs: number; documents: number }[]>`
    select (select count(*)::int from ingest_jobs where user_id = ${userId}) as jobs,
           (select count(*)::int from documents where user_id = ${userId}) as documents`;
  return row;
};

const qstash = () => new Client({ baseUrl: stack.qstashUrl, token: stack.qstashToken });

/** The owner uploads a small text and waits for its job to end, which takes every retry when a fault persists. */
async function uploadThroughRetries(name: string, text: string) {
  const created = await upload(cast.owner.token, name, text, collectionId);
  expect(created.status).toBe(200);
  const documentId = (await documentOfJob(created.body.job_id)) as string;
  return { documentId, job: await waitForJob(cast.owner.token, created.body.job_id, 90_000) };
}

describe.skipIf(skipRealPostgres)('outages and redeliveries', () => {
  it('503 when the queue is down, with no job, document or object left behind', async () => {
    const before = await rowsOf(cast.memberIngest.id);
    await injectFault('qstash', { status: 500 });
    const response = await upload(cast.memberIngest.token, 'queued.txt', 'Never queued.\n', collectionId);
    expect(response.status).toBe(503);
    expect(response.body.detail).not.toMatch(/injected|500/);
    expect(await rowsOf(cast.memberIngest.id)).toEqual(before);
    const keys = await objectsUnder(collectionId);
    expect(keys.some((k) => k.endsWith('original.txt'))).toBe(false);
  });

  it('502 when storage is down, with nothing left behind', async () => {
    const before = await rowsOf(cast.memberIngest.id);
    await injectFault('storage', { status: 500, match: collectionId });
    const response = await upload(cast.memberIngest.token, 'stored.txt', 'Never stored.\n', collectionId);
    expect(response.status).toBe(502);
    expect(response.body.code).toBe('upstream_failed');
    await clearFaults();
    expect(await rowsOf(cast.memberIngest.id)).toEqual(before);
    expect(await objectsUnder(collectionId)).toEqual([]);
  });

  it('resumes after a crash mid-job: the failed batch is retried and nothing is lost or doubled', async () => {
    // The vector index fails the first upserts, as if the worker died mid-batch.
    await injectFault('vector', { status: 500, count: 2, match: collectionId });
    const job = await ingestFile(cast.owner.token, 'sample-presentation-4slides.pptx', collectionId);
    expect(job.status, job.error_message ?? '').toBe('succeeded');
    const chunks = await chunkRows((await documentOfJob(job.job_id)) as string);
    expect(chunks.length).toBe(job.chunks_total);
    const found = await vectorIndex()
      .namespace(collectionId)
      .fetch(chunks.map((c) => c.vector_id));
    expect(found.every((v) => v !== null)).toBe(true);
  });

  it('ends as partial, saying what was lost, when figures cannot be described', async () => {
    // The vision model is down for good: text is indexed, every figure fails on its last attempt.
    // Only chat completions fail, as a vision provider's outage would; embeddings stay up for the text.
    // (Not with Retry-After: 0: about twenty steps failing at once, fast, have crashed `wrangler dev`.)
    await injectFault('models', { status: 500, match: '/chat/completions' });
    const job = await ingestFile(cast.owner.token, 'report-with-figures-reliance.pdf', collectionId);
    expect(job.status).toBe('partial');
    expect(job.error_message).toMatch(/figure on page \d+ could not be described/);
    expect(job.chunks_processed).toBe(job.chunks_total);
    const chunks = await chunkRows((await documentOfJob(job.job_id)) as string);
    expect(chunks.filter((c) => c.chunk_type === 'image_description').every((c) => c.state === 'failed')).toBe(true);
    expect(chunks.filter((c) => c.chunk_type === 'text').every((c) => c.state === 'done')).toBe(true);
    const [doc] = await db()<
      { chunk_count: number }[]
    >`select chunk_count from documents where id = ${await documentOfJob(job.job_id)}`;
    expect(doc?.chunk_count).toBe(chunks.filter((c) => c.chunk_type === 'text').length);
  }, 90_000);

  it('a re-chunk whose new cut cannot be indexed leaves the document as it was', async () => {
    const created = await api('POST', '/collections/', { token: cast.owner.token, body: { name: 'Rechunk fails' } });
    const cid = created.body.id as string;
    const job = await ingestFile(cast.owner.token, 'kept.txt', cid, 'Neap tides come at the quarter moons. '.repeat(40));
    expect(job.status).toBe('succeeded');
    const documentId = (await documentOfJob(job.job_id)) as string;
    const chunksBefore = await chunkRows(documentId);
    const vectorsBefore = (await vectorIndex().info()).namespaces[cid]?.vectorCount;
    const config = { chunk_size: 300, retrieval_strategy: 'similarity' };
    expect((await api('PUT', `/collections/${cid}/config`, { token: cast.admin.token, body: config })).status).toBe(200);

    // Embeddings down for good: the new cut can never be indexed.
    await injectFault('models', { status: 500, match: '/embeddings' });
    const started = await api('POST', `/collections/${cid}/rechunk`, { token: cast.admin.token });
    expect(started.body.jobs).toHaveLength(1);
    const failed = await waitForJob(cast.admin.token, started.body.jobs[0]?.job_id as string, 90_000);
    expect(failed.status).toBe('failed');
    await clearFaults();

    expect(await chunkRows(documentId)).toEqual(chunksBefore);
    expect((await vectorIndex().info()).namespaces[cid]?.vectorCount).toBe(vectorsBefore);
    const [left] = await db()<{ documents: number }[]>`
      select count(*)::int as documents from documents where collection_id = ${cid}`;
    expect(left?.documents).toBe(1);
    // The document is still at the old size, so the next call tries again.
    const retried = await api('POST', `/collections/${cid}/rechunk`, { token: cast.admin.token });
    expect(retried.body.jobs).toEqual([expect.objectContaining({ document_id: documentId })]);
    expect((await waitForJob(cast.admin.token, retried.body.jobs[0]?.job_id as string)).status).toBe('succeeded');
  }, 120_000);

  it('a duplicated delivery neither duplicates nor loses chunks or vectors', async () => {
    const job = await ingestFile(cast.owner.token, 'docx-tables.docx', collectionId);
    expect(job.status).toBe('succeeded');
    const documentId = (await documentOfJob(job.job_id)) as string;
    const before = await chunkRows(documentId);
    const countBefore = (await vectorIndex().info()).namespaces[collectionId]?.vectorCount;

    // Rewind the job as if its deliveries had not been acknowledged, then deliver everything twice.
    await db()`update ingest_jobs set status = 'processing' where id = ${job.job_id}`;
    await db()`update document_chunks set state = 'pending' where document_id = ${documentId}`;
    const message = { url: `${stack.ingestUrl}/steps`, failureCallback: `${stack.ingestUrl}/failures` };
    for (let i = 0; i < 2; i++) {
      await qstash().publishJSON({ ...message, body: { job_id: job.job_id, step: 'extract' } });
      await qstash().publishJSON({ ...message, body: { job_id: job.job_id, step: 'embed', from: 0, to: before.length } });
    }
    const done = await waitForJob(cast.owner.token, job.job_id);
    expect(done.status).toBe('succeeded');
    expect(done.chunks_total).toBe(job.chunks_total);
    expect(done.chunks_processed).toBe(job.chunks_total);
    const after = await chunkRows(documentId);
    expect(after.map((c) => [c.chunk_index, c.vector_id, c.text])).toEqual(
      before.map((c) => [c.chunk_index, c.vector_id, c.text]),
    );
    expect((await vectorIndex().info()).namespaces[collectionId]?.vectorCount).toBe(countBefore);
  });

  it('a batch whose every retry fails is recorded through the failure callback, and the job ends', async () => {
    await injectFault('vector', { status: 500, match: collectionId });
    const { documentId, job } = await uploadThroughRetries('unindexable.txt', 'Never indexed.\n');
    expect(job.status).toBe('failed');
    expect(job.error_message).toMatch(/could not be indexed/);
    expect(job.chunks_processed).toBe(job.chunks_total);
    // With the index down the clean-up could not finish: the row stays, and a delete purges it.
    await clearFaults();
    const deleted = await api('DELETE', `/collections/${collectionId}/documents/${documentId}`, { token: cast.owner.token });
    expect([200, 404]).toContain(deleted.status);
    expect(await objectsUnder(`${collectionId}/${documentId}`)).toEqual([]);
  }, 90_000);

  it('a step whose every retry fails ends the job as failed, through the failure callback', async () => {
    // Uploads (POST) work; every read of the original (GET) fails, so every retry of the extract step fails.
    await injectFault('storage', { status: 500, match: collectionId, method: 'GET' });
    const { documentId, job } = await uploadThroughRetries('unreadable.txt', 'Will not be read.\n');
    expect(job.status).toBe('failed');
    expect(job.error_message).toMatch(/could not be processed/);
    await clearFaults();
    expect(await documentOfJob(job.job_id)).toBeNull();
    expect(await objectsUnder(`${collectionId}/${documentId}`)).toEqual([]);
  }, 90_000);
});

describe.skipIf(skipRealPostgres)('the ingest worker only accepts signed deliveries', () => {
  it('401 for a missing, forged or mismatched signature, with nothing changed', async () => {
    const created = await upload(cast.owner.token, 'signed.txt', 'Signed deliveries only.\n', collectionId);
    const job = await waitForJob(cast.owner.token, created.body.job_id);
    const url = `${stack.ingestUrl}/steps`;
    const body = JSON.stringify({ job_id: job.job_id, step: 'extract' });
    const bytes = new TextEncoder().encode(body);
    const { current } = stack.qstashSigningKeys;
    const post = (headers: Record<string, string>) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    expect((await post({})).status).toBe(401);
    expect((await post({ 'upstash-signature': 'not.a.jwt' })).status).toBe(401);
    // Right in every claim, but signed with a key QStash never had.
    const forged = await signDelivery('wrong-key', url, bytes);
    expect((await post({ 'upstash-signature': forged })).status).toBe(401);
    // Signed with the real key but for a different body.
    const wrongBody = await signDelivery(current, url, new TextEncoder().encode('changed'));
    expect((await post({ 'upstash-signature': wrongBody })).status).toBe(401);
    // Expired, though otherwise right: issued 15 minutes ago, so it lapsed 10 minutes ago.
    const expired = await signDelivery(current, url, bytes, Date.now() - 900_000);
    expect((await post({ 'upstash-signature': expired })).status).toBe(401);
    const unchanged = await api('GET', `/ingest/jobs/${job.job_id}`, { token: cast.owner.token });
    expect(unchanged.body).toMatchObject({
      status: job.status,
      chunks_total: job.chunks_total,
      updated_at: job.updated_at,
    });
  });
});

describe.skipIf(skipRealPostgres)('a generation failure after the stream began', () => {
  it('ends the stream with an error event carrying no upstream text', async () => {
    const text = 'The barrage at La Rance has produced tidal power since 1966.\n';
    const job = await ingestFile(cast.owner.token, 'rance.txt', collectionId, text);
    expect(job.status).toBe('succeeded');
    await injectFault('models', { status: 500, match: '/chat/completions', retryAfter: 0 });
    const { status, events } = await askQuestion(cast.owner.token, {
      question: 'When did La Rance start?',
      collection_id: collectionId,
    });
    expect(status).toBe(200);
    expect(events.map((e) => e.event)).toEqual(['metadata', 'error']);
    expect(dataOf(events, 'metadata')?.sources.length).toBeGreaterThan(0);
    expect(events[1]?.data).toEqual({ message: 'Generation failed' });
    // A 500 may pass: the call was retried once before the stream gave up.
    expect((await faultCounts()).models?.failed).toBeGreaterThanOrEqual(2);
    // The failed exchange is still recorded, with what was produced: nothing.
    const recorded = async () =>
      db()<
        { answer: string }[]
      >`select answer from evaluations where user_id = ${cast.owner.id} and question = 'When did La Rance start?'`;
    for (let i = 0; i < 50 && (await recorded()).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await recorded()).toEqual([{ answer: '' }]);
  });
});
