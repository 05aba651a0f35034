import { createHash, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createJobRepo } from '#core/db/jobs.ts';
import { generatePdf } from '../../bench/ingest/pdf-generator.ts';
import { api, db, problems, type Query, signUp, stack, type TestUser } from '../support/client.ts';
import { fixture } from '../support/documents.ts';
import { type Cast, castWithCollection, collectionWithLink } from '../support/fixtures.ts';
import {
  ingestFile,
  type Job,
  leftOfDocument,
  objectsUnder,
  queuedUrlJob,
  untilQuiet,
  upload,
  vectorIndex,
  waitForJob,
  whileRunning,
} from '../support/ingest.ts';

// The API for programs, jobs side: GET /ingest/jobs (the caller's own, filtered and paged), cancelling a job
// (POST /ingest/jobs/{id}/cancel) with nothing of it left afterwards, and duplicate uploads (the same bytes
// are one document per namespace), all against the real workers and the devstack.

const JOB_FIELDS = [
  'chunks_processed',
  'chunks_total',
  'collection_id',
  'created_at',
  'document_id',
  'error_message',
  'job_id',
  'replaces_document_id',
  'source',
  'status',
  'updated_at',
];

const sha256 = (content: Uint8Array | string) => createHash('sha256').update(content).digest('hex');
const bytesOf = (text: string) => new TextEncoder().encode(text);

const listJobs = (token: string, query: Query = '') => api('GET', `/ingest/jobs${query}`, { token });
const cancel = (token: string, jobId: string) => api('POST', `/ingest/jobs/${jobId}/cancel`, { token });
const getJob = (token: string, jobId: string) => api('GET', `/ingest/jobs/${jobId}`, { token });

async function createCollection(owner: TestUser, name: string): Promise<string> {
  const created = await api('POST', '/collections/', { token: owner.token, body: { name } });
  expect(created.status).toBe(200);
  return created.body.id;
}

/** A collection of the owner's that `member` joined with the ingest permission. */
async function sharedForIngest(owner: TestUser, member: TestUser, name: string): Promise<string> {
  const { collection, link } = await collectionWithLink(owner, name, 'ingest');
  expect((await api('POST', `/collections/join/${link.share_token}`, { token: member.token })).status).toBe(200);
  return collection.id;
}

/**
 * The rows POST /ingest/ writes for an upload still at work (queued, its message not sent): what another upload of the
 * same bytes meets while the first one runs, without depending on how fast the worker is.
 */
async function runningUpload(user: TestUser, collectionId: string, name: string, content: string) {
  const documentId = randomUUID();
  const jobId = randomUUID();
  await createJobRepo(db()).insertWithDocument(
    {
      id: documentId,
      collection_id: collectionId,
      user_id: user.id,
      name,
      source_kind: 'upload',
      source_url: null,
      content_type: 'text/plain',
      doc_type: 'txt',
      size_bytes: bytesOf(content).byteLength,
      storage_path: `${collectionId}/${documentId}/original.txt`,
      chunk_size: 1000,
      content_sha256: sha256(content),
    },
    { id: jobId, user_id: user.id, collection_id: collectionId, source: name, api_key_id: null },
  );
  return { jobId, documentId };
}

async function documentsWithHash(namespaceOwner: { collectionId: string | null; userId: string }, hash: string) {
  const rows = await db()<{ id: string }[]>`
    select id from documents
     where coalesce(collection_id, user_id) = ${namespaceOwner.collectionId ?? namespaceOwner.userId}
       and content_sha256 = ${hash}`;
  return rows.map((row) => row.id);
}

/** Every object under a collection's folder belongs to one of its documents: no upload left a stray original. */
async function expectNoStrayObjects(collectionId: string) {
  const rows = await db()<{ id: string }[]>`select id from documents where collection_id = ${collectionId}`;
  const ids = new Set(rows.map((row) => row.id));
  const strays = (await objectsUnder(collectionId)).filter((key) => !ids.has(key.split('/')[1] as string));
  expect(strays).toEqual([]);
}

describe('GET /ingest/jobs', () => {
  let cast: Cast;
  let collectionA: string;
  let collectionB: string;
  /** The owner's jobs, in the order they were made. */
  const made: { jobId: string; documentId: string }[] = [];
  let memberJob: string;

  beforeAll(async () => {
    ({ cast, collectionId: collectionA } = await castWithCollection('Jobs listed'));
    collectionB = await createCollection(cast.owner, 'Jobs listed B');
    const uploads: [string, string | Uint8Array, string | undefined][] = [
      ['alpha.txt', 'Alpha notes on the spring tide tables for the northern harbour.\n', collectionA],
      ['beta.txt', 'Beta notes on dredging the southern channel before the autumn storms.\n', collectionB],
      ['gamma.md', '# Gamma\n\nPersonal notes on rigging a small sloop for single-handed sailing.\n', undefined],
      ['corrupt-header-only.pdf', fixture('corrupt-header-only.pdf'), collectionA],
    ];
    for (const [name, content, collectionId] of uploads) {
      const created = await upload(cast.owner.token, name, content, collectionId);
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      made.push({ jobId: created.body.job_id, documentId: created.body.document_id });
    }
    // A personal URL job whose message was never sent: it stays queued.
    const queued = await queuedUrlJob(cast.owner.id, `${stack.pagesUrl}/article.html`);
    made.push(queued);
    const member = await upload(cast.memberIngest.token, 'member.txt', 'The member’s own notes on buoyage.\n', collectionA);
    expect(member.status).toBe(200);
    memberJob = member.body.job_id;

    const ended = await Promise.all(
      [...made.slice(0, 4).map((m) => m.jobId), memberJob].map((id, i) =>
        waitForJob(i < 4 ? cast.owner.token : cast.memberIngest.token, id),
      ),
    );
    expect(ended.map((j) => j.status)).toEqual(['succeeded', 'succeeded', 'succeeded', 'failed', 'succeeded']);
  }, 120_000);

  /** The owner's job ids for positions in `made`, newest first. */
  const newestFirst = (...positions: number[]) =>
    positions.sort((a, b) => b - a).map((position) => made[position]?.jobId as string);

  it('lists only the caller’s own jobs, newest first, each with its document', async () => {
    const response = await listJobs(cast.owner.token);
    expect(response.status).toBe(200);
    const jobs = response.body;
    expect(jobs.map((j) => j.job_id)).toEqual(newestFirst(0, 1, 2, 3, 4));
    const created = jobs.map((j) => Date.parse(j.created_at));
    expect(created).toEqual([...created].sort((a, b) => b - a));
    for (const job of jobs) expect(Object.keys(job).sort()).toEqual(JOB_FIELDS);

    const byId = new Map(jobs.map((j) => [j.job_id, j]));
    const [alpha, beta, gamma, corrupt, queued] = made.map((m) => byId.get(m.jobId) as Job);
    expect(alpha).toMatchObject({
      collection_id: collectionA,
      document_id: made[0]?.documentId,
      replaces_document_id: null,
      source: 'alpha.txt',
      status: 'succeeded',
    });
    expect(beta).toMatchObject({ collection_id: collectionB, document_id: made[1]?.documentId, status: 'succeeded' });
    expect(gamma).toMatchObject({ collection_id: null, document_id: made[2]?.documentId, status: 'succeeded' });
    // A failed job keeps its row, without its document.
    expect(corrupt).toMatchObject({ collection_id: collectionA, document_id: null, status: 'failed' });
    expect(corrupt?.error_message).toEqual(expect.any(String));
    expect(queued).toMatchObject({ collection_id: null, document_id: made[4]?.documentId, status: 'queued' });
    // Each listed job reads as GET /ingest/jobs/{id} does.
    expect((await getJob(cast.owner.token, made[0]?.jobId as string)).body).toEqual(alpha);

    // Other users see their own jobs only: the member's upload into the owner's collection is the member's alone.
    expect((await listJobs(cast.memberIngest.token)).body.map((j) => j.job_id)).toEqual([memberJob]);
    for (const user of [cast.memberQuery, cast.stranger, cast.admin]) {
      const theirs = await listJobs(user.token);
      expect(theirs.status).toBe(200);
      expect(theirs.body).toEqual([]);
    }
    expect((await api('GET', '/ingest/jobs', {})).status).toBe(401);
  });

  it('filters by collection, by the personal namespace and by status', async () => {
    const ids = async (query: Query, token = cast.owner.token) => {
      const response = await listJobs(token, query);
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      return response.body.map((j) => j.job_id);
    };
    expect(await ids(`?collection_id=${collectionA}`)).toEqual(newestFirst(0, 3));
    expect(await ids(`?collection_id=${collectionB}`)).toEqual(newestFirst(1));
    expect(await ids('?collection_id=personal')).toEqual(newestFirst(2, 4));
    expect(await ids('?status=failed')).toEqual(newestFirst(3));
    expect(await ids('?status=queued')).toEqual(newestFirst(4));
    expect(await ids('?status=succeeded')).toEqual(newestFirst(0, 1, 2));
    expect(await ids('?status=processing')).toEqual([]);
    expect(await ids(`?collection_id=${collectionA}&status=succeeded`)).toEqual(newestFirst(0));
    expect(await ids('?collection_id=personal&status=queued')).toEqual(newestFirst(4));
    // The member's list of the owner's collection holds the member's job only.
    expect(await ids(`?collection_id=${collectionA}`, cast.memberIngest.token)).toEqual([memberJob]);
    // A collection with none of the caller's jobs, or none at all.
    expect(await ids(`?collection_id=${collectionB}`, cast.memberIngest.token)).toEqual([]);
    expect(await ids(`?collection_id=${randomUUID()}`)).toEqual([]);
  });

  it('pages with limit and offset, and refuses bad values with 422', async () => {
    const all = newestFirst(0, 1, 2, 3, 4);
    const page = async (query: Query) => (await listJobs(cast.owner.token, query)).body.map((j) => j.job_id);
    expect(await page('?limit=2')).toEqual(all.slice(0, 2));
    expect(await page('?limit=2&offset=2')).toEqual(all.slice(2, 4));
    expect(await page('?limit=2&offset=4')).toEqual(all.slice(4));
    expect(await page('?offset=3')).toEqual(all.slice(3));
    expect(await page('?offset=5')).toEqual([]);
    expect(await page('?limit=200')).toEqual(all);
    expect(await page('?limit=1&offset=1&status=succeeded')).toEqual(newestFirst(0, 1, 2).slice(1, 2));

    for (const [query, field] of [
      ['?limit=0', 'limit'],
      ['?limit=201', 'limit'],
      ['?limit=1.5', 'limit'],
      ['?limit=ten', 'limit'],
      ['?offset=-1', 'offset'],
      ['?status=done', 'status'],
    ] as const) {
      const refused = await listJobs(cast.owner.token, query);
      expect(refused.status, query).toBe(422);
      expect(refused.body).toMatchObject({ code: 'validation_failed' });
      expect(problems(refused)[0]?.loc, query).toEqual(['query', field]);
    }
  });
});

describe('GET /ingest/jobs over many jobs', () => {
  it('answers 50 by default, and pages through all of them without losing or repeating one', async () => {
    const user = await signUp('many-jobs');
    // Job rows as the API leaves them once ended, ten of them made at the same instant.
    await db()`
      insert into ingest_jobs (user_id, source, status, error_message, created_at)
      select ${user.id}, 'bulk-' || i, 'failed', 'bulk', now() - make_interval(secs => case when i <= 10 then 100 else i end)
        from generate_series(1, 55) as i`;
    const rows = await db()<{ id: string }[]>`
      select id from ingest_jobs where user_id = ${user.id} order by created_at desc, id desc`;
    const all = rows.map((row) => row.id);

    const first = await listJobs(user.token);
    expect(first.status).toBe(200);
    expect(first.body.map((j) => j.job_id)).toEqual(all.slice(0, 50));
    expect((await listJobs(user.token, '?offset=50')).body.map((j) => j.job_id)).toEqual(all.slice(50));

    const paged: string[] = [];
    for (let offset = 0; offset < 60; offset += 7) {
      paged.push(...(await listJobs(user.token, `?limit=7&offset=${offset}`)).body.map((j) => j.job_id));
    }
    expect(paged).toEqual(all);
  });
});

describe('POST /ingest/jobs/{job_id}/cancel', () => {
  let cast: Cast;
  let collectionId: string;

  beforeAll(async () => {
    ({ cast, collectionId } = await castWithCollection('Cancelled'));
  });

  it('ends a queued job as failed, "Cancelled", at once, with its document; cancelling again answers the same', async () => {
    const { jobId, documentId } = await queuedUrlJob(cast.owner.id, `${stack.pagesUrl}/article.html`);
    const cancelled = await cancel(cast.owner.token, jobId);
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body).toMatchObject({
      job_id: jobId,
      collection_id: null,
      document_id: null,
      status: 'failed',
      error_message: 'Cancelled',
    });
    expect(Object.keys(cancelled.body).sort()).toEqual(JOB_FIELDS);
    expect(await leftOfDocument(`personal-${cast.owner.id}`, documentId)).toEqual({
      documents: 0,
      chunks: 0,
      vectors: 0,
      objects: 0,
    });
    expect((await getJob(cast.owner.token, jobId)).body).toEqual(cancelled.body);

    const again = await cancel(cast.owner.token, jobId);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(cancelled.body);
    const listed = await listJobs(cast.owner.token, '?status=failed');
    expect(listed.body.find((j) => j.job_id === jobId)).toEqual(cancelled.body);
  });

  it('is 409 for a job that ended otherwise, and 404 for anyone else’s job or no job', async () => {
    const done = await ingestFile(cast.owner.token, 'done.txt', collectionId, 'A finished job about anchoring in soft mud.\n');
    expect(done.status).toBe('succeeded');
    const before = (await getJob(cast.owner.token, done.job_id)).body;
    const refused = await cancel(cast.owner.token, done.job_id);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'conflict' });
    expect((await getJob(cast.owner.token, done.job_id)).body).toEqual(before);

    const failed = await ingestFile(cast.owner.token, 'corrupt-header-only.pdf', collectionId);
    expect(failed.status).toBe('failed');
    expect((await cancel(cast.owner.token, failed.job_id)).status).toBe(409);
    expect((await getJob(cast.owner.token, failed.job_id)).body.error_message).toBe(failed.error_message);

    // Someone else's job, running or not, does not exist for the caller; nor does a made-up one.
    const { jobId, documentId } = await queuedUrlJob(cast.owner.id, `${stack.pagesUrl}/article.html`);
    for (const user of [cast.memberIngest, cast.memberQuery, cast.stranger, cast.admin]) {
      for (const id of [jobId, done.job_id]) {
        const response = await cancel(user.token, id);
        expect(response.status).toBe(404);
        expect(response.body).toMatchObject({ code: 'not_found' });
      }
    }
    expect((await cancel(cast.owner.token, randomUUID())).status).toBe(404);
    expect((await cancel(cast.owner.token, 'not-a-job')).status).toBe(404);
    expect((await api('POST', `/ingest/jobs/${jobId}/cancel`, {})).status).toBe(401);
    // None of that touched the owner's queued job.
    expect((await getJob(cast.owner.token, jobId)).body).toMatchObject({ status: 'queued', document_id: documentId });
    expect((await cancel(cast.owner.token, jobId)).body).toMatchObject({ status: 'failed', error_message: 'Cancelled' });
  });

  it('stops a long PDF part-way: nothing of it is left, even what steps in flight wrote afterwards', async () => {
    const own = await createCollection(cast.owner, 'Cancelled mid-way');
    // Four page ranges with figures: each range is a step that stores PNGs and chunk rows, then batches embed them.
    const pdf = generatePdf({ pages: 400, seed: 12, chartEvery: 0, photoEvery: 25, linesPerColumn: 6 });
    const started = Date.now();
    const created = await upload(cast.owner.token, 'long-report.pdf', pdf.bytes, own);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const { job_id: jobId, document_id: documentId } = created.body;
    // Cancelled once the first range is saved and some of it indexed: rows, vectors and stored files exist.
    const running = await whileRunning(cast.owner.token, jobId, (j) => j.chunks_processed > 0, 90_000);
    const rangeMs = Date.now() - started;
    const before = await leftOfDocument(own, documentId);
    expect(before.documents).toBe(1);
    expect(before.chunks).toBeGreaterThan(0);
    expect(before.objects).toBeGreaterThan(1);

    const asked = Date.now();
    const cancelled = await cancel(cast.owner.token, jobId);
    const answeredMs = Date.now() - asked;
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body).toMatchObject({
      job_id: jobId,
      collection_id: own,
      document_id: null,
      status: 'failed',
      error_message: 'Cancelled',
    });
    expect(cancelled.body.chunks_total).toBeGreaterThanOrEqual(running.chunks_total);
    // At once: the job's answer is the cancellation, not the end of the work under way.
    expect(answeredMs).toBeLessThan(10_000);
    // Its rows and stored files went with the answer; vectors a batch in flight upserts are taken back by that batch.
    const now = await leftOfDocument(own, documentId);
    expect({ documents: now.documents, chunks: now.chunks }).toEqual({ documents: 0, chunks: 0 });
    expect((await api('GET', `/collections/${own}/documents`, { token: cast.owner.token })).body).toEqual([]);

    // Steps already delivered finish (a range being read, batches being embedded) and take back what they wrote.
    const settled = await untilQuiet(
      async () => ({
        ...(await leftOfDocument(own, documentId)),
        namespace: (await vectorIndex().info()).namespaces[own]?.vectorCount ?? 0,
        folder: (await objectsUnder(own)).length,
      }),
      (left) => Object.values(left).every((n) => n === 0),
      { quietMs: Math.min(Math.max(6_000, 2 * rangeMs), 30_000), timeoutMs: 90_000 },
    );
    expect(settled).toEqual({ documents: 0, chunks: 0, vectors: 0, objects: 0, namespace: 0, folder: 0 });
    // And no later step changed how the job ended.
    const after = (await getJob(cast.owner.token, jobId)).body;
    expect(after).toMatchObject({ status: 'failed', error_message: 'Cancelled', document_id: null });
    const again = await cancel(cast.owner.token, jobId);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(after);
  }, 180_000);
});

describe('duplicate uploads', () => {
  let cast: Cast;
  let collectionId: string;
  let otherCollection: string;
  const HARBOUR = 'The harbour master logs every vessel that enters after dark, with its draught and its cargo.\n';
  let harbourDoc: string;
  let harbourJob: Job;

  beforeAll(async () => {
    ({ cast, collectionId } = await castWithCollection('Duplicates'));
    otherCollection = await createCollection(cast.owner, 'Duplicates elsewhere');
    const created = await upload(cast.owner.token, 'harbour.txt', HARBOUR, collectionId);
    expect(created.body.duplicate).toBe(false);
    harbourDoc = created.body.document_id;
    harbourJob = await waitForJob(cast.owner.token, created.body.job_id);
    expect(harbourJob.status).toBe('succeeded');
  }, 60_000);

  it('the same bytes again in the same collection make no second document: a succeeded job points at the first', async () => {
    const again = await upload(cast.owner.token, 'harbour-copy.txt', HARBOUR, collectionId);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body).toEqual({ job_id: expect.any(String), document_id: harbourDoc, duplicate: true });
    expect(again.body.job_id).not.toBe(harbourJob.job_id);
    // Already ended, as the first one did, without waiting for any step.
    const job = (await getJob(cast.owner.token, again.body.job_id)).body;
    expect(job).toMatchObject({
      collection_id: collectionId,
      document_id: harbourDoc,
      replaces_document_id: null,
      source: 'harbour-copy.txt',
      status: 'succeeded',
      error_message: null,
      chunks_total: harbourJob.chunks_total,
      chunks_processed: harbourJob.chunks_total,
    });
    expect(await documentsWithHash({ collectionId, userId: cast.owner.id }, sha256(HARBOUR))).toEqual([harbourDoc]);
    const listed = await api('GET', `/collections/${collectionId}/documents`, { token: cast.owner.token });
    expect(listed.body.map((d: { id: string }) => d.id)).toEqual([harbourDoc]);
    await expectNoStrayObjects(collectionId);
    // Its job is the owner's, listed with the others; being ended, it cannot be cancelled.
    expect((await listJobs(cast.owner.token, `?collection_id=${collectionId}`)).body.map((j) => j.job_id)).toEqual([
      again.body.job_id,
      harbourJob.job_id,
    ]);
    expect((await cancel(cast.owner.token, again.body.job_id)).status).toBe(409);
  });

  it('the same bytes in another collection or the personal namespace are new documents', async () => {
    const elsewhere = await upload(cast.owner.token, 'harbour.txt', HARBOUR, otherCollection);
    const personal = await upload(cast.owner.token, 'harbour.txt', HARBOUR);
    for (const created of [elsewhere, personal]) {
      expect(created.status).toBe(200);
      expect(created.body.duplicate).toBe(false);
      expect(created.body.document_id).not.toBe(harbourDoc);
      expect((await waitForJob(cast.owner.token, created.body.job_id)).status).toBe('succeeded');
    }
    expect(elsewhere.body.document_id).not.toBe(personal.body.document_id);
    expect((await api('GET', '/ingest/documents', { token: cast.owner.token })).body.map((d: { id: string }) => d.id)).toContain(
      personal.body.document_id,
    );
    // Once the document holding them is deleted, the same bytes make a document again.
    const deleted = await api('DELETE', `/collections/${otherCollection}/documents/${elsewhere.body.document_id}`, {
      token: cast.owner.token,
    });
    expect(deleted.status).toBe(200);
    const afresh = await upload(cast.owner.token, 'harbour.txt', HARBOUR, otherCollection);
    expect(afresh.body.duplicate).toBe(false);
    expect((await waitForJob(cast.owner.token, afresh.body.job_id)).status).toBe('succeeded');
  });

  it('the same bytes uploaded at the same moment make one document', async () => {
    const TIDE = 'Spring tides follow the new and the full moon, when the sun and the moon pull in line.\n';
    const answers = await Promise.all(
      ['tide-1.txt', 'tide-2.txt', 'tide-3.txt'].map((name) => upload(cast.owner.token, name, TIDE, collectionId)),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    const documentIds = new Set(answers.map((a) => a.body.document_id));
    expect(documentIds.size).toBe(1);
    expect(answers.filter((a) => !a.body.duplicate)).toHaveLength(1);
    for (const answer of answers) {
      expect((await waitForJob(cast.owner.token, answer.body.job_id)).status).toBe('succeeded');
    }
    expect(await documentsWithHash({ collectionId, userId: cast.owner.id }, sha256(TIDE))).toEqual([...documentIds]);
    await expectNoStrayObjects(collectionId);
  });

  it('a member with ingest permission uploading the owner’s bytes gets a succeeded job of their own on the owner’s document', async () => {
    const mine = await upload(cast.memberIngest.token, 'from-the-member.txt', HARBOUR, collectionId);
    expect(mine.status, JSON.stringify(mine.body)).toBe(200);
    expect(mine.body).toMatchObject({ document_id: harbourDoc, duplicate: true });
    const job = await getJob(cast.memberIngest.token, mine.body.job_id);
    expect(job.body).toMatchObject({ status: 'succeeded', document_id: harbourDoc, source: 'from-the-member.txt' });
    // The job is the member's: the owner neither sees nor lists it.
    expect((await getJob(cast.owner.token, mine.body.job_id)).status).toBe(404);
    expect((await listJobs(cast.owner.token)).body.map((j) => j.job_id)).not.toContain(mine.body.job_id);
    expect((await listJobs(cast.memberIngest.token)).body.map((j) => j.job_id)).toContain(mine.body.job_id);
    // Still one document, the owner's.
    expect(await documentsWithHash({ collectionId, userId: cast.owner.id }, sha256(HARBOUR))).toEqual([harbourDoc]);
    const [row] = await db()<{ user_id: string }[]>`select user_id from documents where id = ${harbourDoc}`;
    expect(row?.user_id).toBe(cast.owner.id);
  });

  it('answers the caller’s own job still at work on the bytes; someone else’s is 409 until it has ended', async () => {
    const BUOYS = 'Cardinal buoys mark the safe side of a hazard by the points of the compass.\n';
    const running = await runningUpload(cast.owner, collectionId, 'buoys.txt', BUOYS);
    const jobsBefore = (await listJobs(cast.memberIngest.token)).body.length;

    const own = await upload(cast.owner.token, 'buoys-again.txt', BUOYS, collectionId);
    expect(own.status).toBe(200);
    expect(own.body).toEqual({ job_id: running.jobId, document_id: running.documentId, duplicate: true });

    const theirs = await upload(cast.memberIngest.token, 'buoys.txt', BUOYS, collectionId);
    expect(theirs.status, JSON.stringify(theirs.body)).toBe(409);
    expect(theirs.body).toMatchObject({ code: 'conflict' });
    expect((await listJobs(cast.memberIngest.token)).body).toHaveLength(jobsBefore);
    expect(await documentsWithHash({ collectionId, userId: cast.owner.id }, sha256(BUOYS))).toEqual([running.documentId]);
    await expectNoStrayObjects(collectionId);

    // Once the owner's job is cancelled its document is gone, and the member's upload makes one.
    expect((await cancel(cast.owner.token, running.jobId)).body).toMatchObject({ status: 'failed', error_message: 'Cancelled' });
    const retried = await upload(cast.memberIngest.token, 'buoys.txt', BUOYS, collectionId);
    expect(retried.status).toBe(200);
    expect(retried.body.duplicate).toBe(false);
    expect(retried.body.document_id).not.toBe(running.documentId);
    expect((await waitForJob(cast.memberIngest.token, retried.body.job_id)).status).toBe('succeeded');
  });

  it('the same holds with a real upload still being read: the same job for its owner, 409 for a member', async () => {
    const shared = await sharedForIngest(cast.owner, cast.memberIngest, 'Duplicates in flight');
    const pdf = generatePdf({ pages: 300, seed: 21, chartEvery: 0, photoEvery: 0, linesPerColumn: 6 });
    const first = await upload(cast.owner.token, 'long.pdf', pdf.bytes, shared);
    expect(first.status).toBe(200);
    const again = await upload(cast.owner.token, 'long-again.pdf', pdf.bytes, shared);
    const member = await upload(cast.memberIngest.token, 'long.pdf', pdf.bytes, shared);
    // The first job must still be at work for these answers to mean anything.
    const state = (await getJob(cast.owner.token, first.body.job_id)).body.status;
    expect(['queued', 'processing']).toContain(state);
    expect(again.body).toEqual({ job_id: first.body.job_id, document_id: first.body.document_id, duplicate: true });
    expect(member.status).toBe(409);
    expect((await cancel(cast.owner.token, first.body.job_id)).status).toBe(200);
    await untilQuiet(
      async () => (await vectorIndex().info()).namespaces[shared]?.vectorCount ?? 0,
      (n) => n === 0,
    );
    expect(await objectsUnder(shared)).toEqual([]);
  }, 120_000);
});
