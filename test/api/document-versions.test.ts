import { createHash, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { generatePdf } from '../../bench/ingest/pdf-generator.ts';
import { api, db, fileForm, problems, type Query, type Schema, stack, type TestUser } from '../support/client.ts';
import { fixture } from '../support/documents.ts';
import { type Cast, castUsers, castWithCollection } from '../support/fixtures.ts';
import {
  chunkRows,
  leftOfDocument,
  objectsUnder,
  queuedJob,
  untilQuiet,
  upload,
  vectorsOf,
  waitForJob,
  whileRunning,
} from '../support/ingest.ts';

// The API for programs, documents side: a new version of a document (`replace_document_id` on POST /ingest/ and
// POST /ingest/url) replaces it only once indexed, and GET /collections/{id}/documents pages with limit/offset.

const KEEPER =
  'Keeper’s log. Osric Penhallow kept the Gannet Rock lighthouse for thirty-one winters and trimmed its wick at every dusk.\n\n' +
  'The lamp burned colza oil until the Trinity House inspectors brought paraffin to the rock.\n';
const KEEPER_QUESTION = 'Who kept the Gannet Rock lighthouse, Osric Penhallow?';

const sha256 = (content: Uint8Array | string) => createHash('sha256').update(content).digest('hex');

/** POST /ingest/ with `replace_document_id`, as a program sends a new version of a document. */
function uploadVersion(
  token: string,
  name: string,
  content: Uint8Array | string,
  target: { collectionId?: string; replaces: string },
) {
  const query = new URLSearchParams({ replace_document_id: target.replaces });
  if (target.collectionId !== undefined) query.set('collection_id', target.collectionId);
  return api('POST', `/ingest/?${query}`, { token, body: fileForm(name, content) });
}

const urlVersion = (token: string, body: Record<string, unknown>) => api('POST', '/ingest/url', { token, body });
const getJob = (token: string, jobId: string) => api('GET', `/ingest/jobs/${jobId}`, { token });

async function listed(token: string, collectionId: string, query: Query = '') {
  const response = await api('GET', `/collections/${collectionId}/documents${query}`, { token });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
}

/** The documents POST /query/search draws its passages from. */
async function searched(token: string, collectionId: string, question: string) {
  const response = await api('POST', '/query/search', { token, body: { question, collection_id: collectionId, top_k: 10 } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.sources.map((s) => s.document_id);
}

async function createCollection(owner: TestUser, name: string): Promise<string> {
  const created = await api('POST', '/collections/', { token: owner.token, body: { name } });
  expect(created.status).toBe(200);
  return created.body.id;
}

/** An ingested document, with what it has in every store, to compare with later. */
async function ingested(owner: TestUser, collectionId: string | undefined, name: string, content: string | Uint8Array) {
  const created = await upload(owner.token, name, content, collectionId);
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const job = await waitForJob(owner.token, created.body.job_id);
  expect(job.status, job.error_message ?? '').toBe('succeeded');
  const id = created.body.document_id as string;
  return { id, job, held: await holdings(collectionId ?? `personal-${owner.id}`, id) };
}

/** A document's row, chunk rows, vectors and stored objects. */
async function holdings(namespace: string, documentId: string) {
  const [row] = await db()`select id, name, content_sha256, chunk_count, created_at from documents where id = ${documentId}`;
  return {
    row,
    chunks: await chunkRows(documentId),
    vectors: (await vectorsOf(namespace, documentId)).sort(),
    objects: (await objectsUnder(`${namespace}/${documentId}`)).sort(),
  };
}

const nothing = { documents: 0, chunks: 0, vectors: 0, objects: 0 };

describe('a new version of a document (replace_document_id)', () => {
  let cast: Cast;
  let shared: string;

  beforeAll(async () => {
    ({ cast, collectionId: shared } = await castWithCollection('Versions'));
  });

  it('keeps the old document listed and searchable while the new one is ingested, then removes all of it', async () => {
    const collectionId = await createCollection(cast.owner, 'Versions: a new PDF');
    const old = await ingested(cast.owner, collectionId, 'keeper.txt', KEEPER);
    expect(old.held.vectors.length).toBeGreaterThan(0);
    expect(old.held.objects.length).toBeGreaterThan(0);
    expect(await searched(cast.owner.token, collectionId, KEEPER_QUESTION)).toContain(old.id);

    // Two page ranges: long enough to look at the collection while it is read.
    const pdf = generatePdf({ pages: 160, seed: 5, chartEvery: 0, photoEvery: 0, linesPerColumn: 6 });
    const created = await uploadVersion(cast.owner.token, 'keeper-v2.pdf', pdf.bytes, { collectionId, replaces: old.id });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toEqual({ job_id: expect.any(String), document_id: expect.any(String), duplicate: false });
    const newId = created.body.document_id as string;
    expect(newId).not.toBe(old.id);
    const jobId = created.body.job_id as string;
    expect((await getJob(cast.owner.token, jobId)).body).toMatchObject({
      collection_id: collectionId,
      document_id: newId,
      replaces_document_id: old.id,
      source: 'keeper-v2.pdf',
    });

    // While it runs: both are listed, the old one is still found, and a second new version of either is 409.
    expect((await listed(cast.owner.token, collectionId)).map((d) => d.id).sort()).toEqual([old.id, newId].sort());
    expect(await searched(cast.owner.token, collectionId, KEEPER_QUESTION)).toContain(old.id);
    const again = await uploadVersion(cast.owner.token, 'keeper-v3.txt', 'Another version.\n', {
      collectionId,
      replaces: old.id,
    });
    expect(again.status, JSON.stringify(again.body)).toBe(409);
    expect(again.body).toMatchObject({ code: 'conflict' });
    const byUrl = await urlVersion(cast.owner.token, {
      url: `${stack.pagesUrl}/article.html`,
      collection_id: collectionId,
      replace_document_id: old.id,
    });
    expect(byUrl.status).toBe(409);
    const ofTheNew = await uploadVersion(cast.owner.token, 'keeper-v3.txt', 'Another version.\n', {
      collectionId,
      replaces: newId,
    });
    expect(ofTheNew.status).toBe(409);
    expect(await holdings(collectionId, old.id)).toEqual(old.held);
    // The job list says which document the running job replaces.
    const jobs = await api('GET', `/ingest/jobs?collection_id=${collectionId}`, { token: cast.owner.token });
    expect(jobs.body.find((j) => j.job_id === jobId)).toMatchObject({ document_id: newId, replaces_document_id: old.id });
    const state = (await getJob(cast.owner.token, jobId)).body.status;
    expect(['queued', 'processing'], 'the new version was indexed before the checks above were done').toContain(state);

    const job = await waitForJob(cast.owner.token, jobId, 150_000);
    expect(job.status, job.error_message ?? '').toBe('succeeded');

    // The old one is gone from every store; only the new one is listed and found.
    expect(await leftOfDocument(collectionId, old.id)).toEqual(nothing);
    expect((await listed(cast.owner.token, collectionId)).map((d) => d.id)).toEqual([newId]);
    expect(await searched(cast.owner.token, collectionId, KEEPER_QUESTION)).not.toContain(old.id);
    const words = pdf.pageWords[120]?.slice(0, 14).join(' ') as string;
    const found = await searched(cast.owner.token, collectionId, words);
    expect(found[0]).toBe(newId);
    const now = await holdings(collectionId, newId);
    expect(now.vectors.length).toBe(job.chunks_total);
    expect(now.row?.content_sha256).toBe(sha256(pdf.bytes));
    // The job no longer names a document that is gone.
    expect((await getJob(cast.owner.token, jobId)).body).toMatchObject({ document_id: newId, replaces_document_id: null });
    // The old bytes went with the old document: uploading them again makes a document.
    const back = await upload(cast.owner.token, 'keeper.txt', KEEPER, collectionId);
    expect(back.body.duplicate).toBe(false);
    expect((await waitForJob(cast.owner.token, back.body.job_id)).status).toBe('succeeded');
  }, 240_000);

  it('takes a web page as the new version through POST /ingest/url (replace_document_id in the body)', async () => {
    const collectionId = await createCollection(cast.owner, 'Versions: a web page');
    const old = await ingested(cast.owner, collectionId, 'tides.txt', KEEPER);
    const created = await urlVersion(cast.owner.token, {
      url: `${stack.pagesUrl}/article.html`,
      collection_id: collectionId,
      replace_document_id: old.id,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.duplicate).toBe(false);
    const job = await waitForJob(cast.owner.token, created.body.job_id);
    expect(job.status, job.error_message ?? '').toBe('succeeded');
    expect(await leftOfDocument(collectionId, old.id)).toEqual(nothing);
    expect((await listed(cast.owner.token, collectionId)).map((d) => d.id)).toEqual([created.body.document_id]);
    expect(await searched(cast.owner.token, collectionId, 'How does a tidal barrage work at La Rance?')).toEqual(
      expect.arrayContaining([created.body.document_id]),
    );
    expect(await searched(cast.owner.token, collectionId, KEEPER_QUESTION)).not.toContain(old.id);
  });

  it('replaces a personal document too, when no collection is given', async () => {
    const old = await ingested(cast.owner, undefined, 'keeper-notes.md', `# Notes\n\n${KEEPER}`);
    const created = await uploadVersion(
      cast.owner.token,
      'keeper-notes.md',
      '# Notes\n\nThe rock light was automated in 1987.\n',
      {
        replaces: old.id,
      },
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const job = await waitForJob(cast.owner.token, created.body.job_id);
    expect(job).toMatchObject({ status: 'succeeded', collection_id: null });
    expect(await leftOfDocument(`personal-${cast.owner.id}`, old.id)).toEqual(nothing);
    const mine = (await api('GET', '/ingest/documents', { token: cast.owner.token })).body.map((d: { id: string }) => d.id);
    expect(mine).toContain(created.body.document_id);
    expect(mine).not.toContain(old.id);
  });

  it('leaves the old document as it was when the new version fails, and takes a later one', async () => {
    const collectionId = await createCollection(cast.owner, 'Versions: a corrupt file');
    const old = await ingested(cast.owner, collectionId, 'keeper.txt', KEEPER);
    const created = await uploadVersion(cast.owner.token, 'keeper-v2.pdf', fixture('corrupt-header-only.pdf'), {
      collectionId,
      replaces: old.id,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const job = await waitForJob(cast.owner.token, created.body.job_id);
    expect(job.status).toBe('failed');
    expect((await getJob(cast.owner.token, job.job_id)).body).toMatchObject({ document_id: null, replaces_document_id: old.id });
    expect(await leftOfDocument(collectionId, created.body.document_id)).toEqual(nothing);

    expect(await holdings(collectionId, old.id)).toEqual(old.held);
    expect((await listed(cast.owner.token, collectionId)).map((d) => d.id)).toEqual([old.id]);
    expect(await searched(cast.owner.token, collectionId, KEEPER_QUESTION)).toContain(old.id);

    // Nothing is at work on it any more: another new version is taken, and replaces it.
    const later = await uploadVersion(cast.owner.token, 'keeper-v3.txt', 'The rock light was automated in 1987.\n', {
      collectionId,
      replaces: old.id,
    });
    expect(later.status, JSON.stringify(later.body)).toBe(200);
    expect((await waitForJob(cast.owner.token, later.body.job_id)).status).toBe('succeeded');
    expect(await leftOfDocument(collectionId, old.id)).toEqual(nothing);
    expect((await listed(cast.owner.token, collectionId)).map((d) => d.id)).toEqual([later.body.document_id]);
  });

  it('refuses a new version whose bytes the namespace already holds (409): nothing is replaced or kept', async () => {
    const collectionId = await createCollection(cast.owner, 'Versions: the same bytes');
    const old = await ingested(cast.owner, collectionId, 'keeper.txt', KEEPER);
    const other = await ingested(cast.owner, collectionId, 'tides.txt', 'The tide at La Rance turns twice a day.\n');
    const jobsBefore = (await api('GET', `/ingest/jobs?collection_id=${collectionId}`, { token: cast.owner.token })).body;

    // The document's own bytes: it would replace itself.
    const same = await uploadVersion(cast.owner.token, 'keeper-v2.txt', KEEPER, { collectionId, replaces: old.id });
    expect(same.status, JSON.stringify(same.body)).toBe(409);
    expect(same.body).toEqual({
      code: 'conflict',
      detail: 'This file is identical to the document it would replace: there is nothing to replace',
      request_id: expect.any(String),
    });
    // Another document's bytes: the same bytes stay one document, so that one is named.
    const elsewhere = await uploadVersion(cast.owner.token, 'keeper-v2.txt', 'The tide at La Rance turns twice a day.\n', {
      collectionId,
      replaces: old.id,
    });
    expect(elsewhere.status, JSON.stringify(elsewhere.body)).toBe(409);
    expect(elsewhere.body).toMatchObject({ code: 'conflict' });
    expect(elsewhere.body.detail).toContain(other.id);
    expect(elsewhere.body.detail).toContain('nothing was replaced');

    // No job, no document, no stored copy: everything as it was.
    expect((await api('GET', `/ingest/jobs?collection_id=${collectionId}`, { token: cast.owner.token })).body).toEqual(
      jobsBefore,
    );
    expect(await holdings(collectionId, old.id)).toEqual(old.held);
    expect(await holdings(collectionId, other.id)).toEqual(other.held);
    expect((await listed(cast.owner.token, collectionId)).map((d) => d.id).sort()).toEqual([old.id, other.id].sort());
    expect((await objectsUnder(collectionId)).sort()).toEqual([...old.held.objects, ...other.held.objects].sort());
    // Without replace_document_id the same bytes are still an ordinary duplicate.
    const plain = await upload(cast.owner.token, 'keeper-again.txt', KEEPER, collectionId);
    expect(plain.body).toEqual({ job_id: expect.any(String), document_id: old.id, duplicate: true });
  });

  it('refuses members (403), documents that are not there or elsewhere (404), and one already being replaced (409)', async () => {
    const old = await ingested(cast.owner, shared, 'keeper.txt', KEEPER);
    const elsewhere = await createCollection(cast.owner, 'Versions: elsewhere');
    const other = await ingested(cast.owner, elsewhere, 'other.txt', 'A document of another collection.\n');
    const personal = await ingested(cast.owner, undefined, 'mine.txt', 'A personal document about knots.\n');
    const before = await listed(cast.owner.token, shared);
    const NEW = 'A new version nobody may make.\n';
    const users = [cast.owner, cast.memberIngest, cast.memberQuery, cast.stranger, cast.admin].map((u) => u.id);
    const jobCount = async () =>
      (await db()<{ n: number }[]>`select count(*)::int as n from ingest_jobs where user_id = any(${users}::uuid[])`)[0]?.n;
    const jobsBefore = await jobCount();

    for (const user of [cast.memberIngest, cast.memberQuery, cast.stranger, cast.admin]) {
      const file = await uploadVersion(user.token, 'keeper-v2.txt', NEW, { collectionId: shared, replaces: old.id });
      expect(file.status, `${user.email}: ${JSON.stringify(file.body)}`).toBe(403);
      expect(file.body).toMatchObject({ code: 'forbidden' });
      const page = await urlVersion(user.token, {
        url: `${stack.pagesUrl}/article.html`,
        collection_id: shared,
        replace_document_id: old.id,
      });
      expect(page.status).toBe(403);
    }
    for (const [replaces, collectionId] of [
      [randomUUID(), shared],
      ['not-a-document', shared],
      [other.id, shared],
      [personal.id, shared],
      [old.id, undefined],
      [old.id, elsewhere],
    ] as [string, string | undefined][]) {
      const file = await uploadVersion(cast.owner.token, 'keeper-v2.txt', NEW, { collectionId, replaces });
      expect(file.status, `${replaces} in ${collectionId}: ${JSON.stringify(file.body)}`).toBe(404);
      expect(file.body).toMatchObject({ code: 'not_found' });
      const page = await urlVersion(cast.owner.token, {
        url: `${stack.pagesUrl}/article.html`,
        collection_id: collectionId ?? null,
        replace_document_id: replaces,
      });
      expect(page.status).toBe(404);
    }
    // None of those made a job, a document or an object.
    expect(await jobCount()).toBe(jobsBefore);
    expect(await listed(cast.owner.token, shared)).toEqual(
      before.map((d) => ({ ...d, open_url: d.open_url === null ? null : expect.any(String) })),
    );
    expect(await holdings(shared, old.id)).toEqual(old.held);
    expect(await holdings(elsewhere, other.id)).toEqual(other.held);
    expect(await holdings(`personal-${cast.owner.id}`, personal.id)).toEqual(personal.held);
  });

  it('accepts one of two new versions of a document sent at the same moment', async () => {
    const collectionId = await createCollection(cast.owner, 'Versions: two at once');
    const old = await ingested(cast.owner, collectionId, 'keeper.txt', KEEPER);
    const answers = await Promise.all(
      ['The light was automated in 1987.\n', 'The light was sold to a trust in 2004.\n'].map((text, i) =>
        uploadVersion(cast.owner.token, `keeper-v${i + 2}.txt`, text, { collectionId, replaces: old.id }),
      ),
    );
    const jobs = [];
    for (const answer of answers) {
      if (answer.status !== 200) continue;
      const { replaces_document_id } = (await getJob(cast.owner.token, answer.body.job_id)).body;
      jobs.push({ replaces_document_id, ended: (await waitForJob(cast.owner.token, answer.body.job_id)).status });
    }
    const left = (await listed(cast.owner.token, collectionId)).map((d) => d.name);
    // One becomes the new version; the other is refused as for a document already being replaced.
    expect({ statuses: answers.map((a) => a.status).sort(), documents: left }, JSON.stringify(jobs)).toEqual({
      statuses: [200, 409],
      documents: [expect.stringMatching(/^keeper-v[23]\.txt$/)],
    });
  });

  // Cancelled while its first page range is read, before any of its vectors exist: the cancellation with batches in
  // flight is test/api/jobs.test.ts's. (The devstack's vector index, usearch, can spin forever in a removal once a
  // namespace has used every slot of its key table, which freezes the whole devstack.)
  it('leaves the old document as it was when its new version is cancelled part-way', async () => {
    const collectionId = await createCollection(cast.owner, 'Versions: cancelled');
    const old = await ingested(cast.owner, collectionId, 'keeper.txt', KEEPER);
    const pdf = generatePdf({ pages: 300, seed: 8, chartEvery: 0, photoEvery: 0, linesPerColumn: 6 });
    const created = await uploadVersion(cast.owner.token, 'keeper-v2.pdf', pdf.bytes, { collectionId, replaces: old.id });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const newId = created.body.document_id as string;
    await whileRunning(cast.owner.token, created.body.job_id, (j) => j.status === 'processing', 60_000);
    const cancelled = await api('POST', `/ingest/jobs/${created.body.job_id}/cancel`, { token: cast.owner.token });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'failed', error_message: 'Cancelled', replaces_document_id: old.id });

    await untilQuiet(
      () => leftOfDocument(collectionId, newId),
      (left) => Object.values(left).every((n) => n === 0),
      { quietMs: 8_000, timeoutMs: 90_000 },
    );
    expect(await holdings(collectionId, old.id)).toEqual(old.held);
    expect((await listed(cast.owner.token, collectionId)).map((d) => d.id)).toEqual([old.id]);
    expect(await searched(cast.owner.token, collectionId, KEEPER_QUESTION)).toContain(old.id);
    // And it can be replaced afterwards.
    const later = await uploadVersion(cast.owner.token, 'keeper-v3.txt', 'The light was automated in 1987.\n', {
      collectionId,
      replaces: old.id,
    });
    expect(later.status).toBe(200);
    expect((await waitForJob(cast.owner.token, later.body.job_id)).status).toBe('succeeded');
  }, 180_000);

  it('cannot be cancelled once it is swapping itself for the old document (409), which it finishes', async () => {
    const collectionId = await createCollection(cast.owner, 'Versions: swapping');
    const old = await queuedJob(cast.owner.id, collectionId);
    const next = await queuedJob(cast.owner.id, collectionId);
    // The state the ingest worker's last step leaves for the moment it removes the old version (claimFinish).
    await db()`update ingest_jobs set status = 'processing', finishing = true, replaces_document_id = ${old.documentId}
                where id = ${next.jobId}`;
    const refused = await api('POST', `/ingest/jobs/${next.jobId}/cancel`, { token: cast.owner.token });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      code: 'conflict',
      detail: 'The job is replacing the document it is a new version of, and can no longer be cancelled',
    });
    const [job] = await db()`select status, document_id from ingest_jobs where id = ${next.jobId}`;
    expect(job).toMatchObject({ status: 'processing', document_id: next.documentId });
  });
});

describe('GET /collections/{id}/documents with limit and offset', () => {
  let cast: Cast;
  let collectionId: string;
  let all: Schema<'Document'>[];

  beforeAll(async () => {
    cast = await castUsers();
    collectionId = await createCollection(cast.owner, 'Paged');
    const jobs: string[] = [];
    for (let i = 1; i <= 5; i++) {
      const created = await upload(
        cast.owner.token,
        `page-${i}.txt`,
        `Document number ${i} of the paged collection.\n`,
        collectionId,
      );
      expect(created.status).toBe(200);
      jobs.push(created.body.job_id);
    }
    for (const job of jobs) expect((await waitForJob(cast.owner.token, job)).status).toBe('succeeded');
    all = await listed(cast.owner.token, collectionId);
  }, 90_000);

  const ids = (documents: Schema<'Document'>[]) => documents.map((d) => d.id);

  it('answers the whole list without them, newest first, as before', async () => {
    expect(all.map((d) => d.name)).toEqual(['page-5.txt', 'page-4.txt', 'page-3.txt', 'page-2.txt', 'page-1.txt']);
    const rows = await db()<{ id: string }[]>`
      select id from documents where collection_id = ${collectionId} order by created_at desc, id`;
    expect(ids(all)).toEqual(rows.map((r) => r.id));
    for (const doc of all) {
      expect(Object.keys(doc).sort()).toEqual([
        'chunk_count',
        'content_type',
        'created_at',
        'document_date',
        'id',
        'last_changed_at',
        'last_fetched_at',
        'metadata',
        'name',
        'open_url',
        'size_bytes',
        'source_id',
        'source_kind',
        'title',
        'type',
      ]);
    }
  });

  it('pages the list', async () => {
    const page = async (query: Query) => ids(await listed(cast.owner.token, collectionId, query));
    expect(await page('?limit=2')).toEqual(ids(all).slice(0, 2));
    expect(await page('?limit=2&offset=2')).toEqual(ids(all).slice(2, 4));
    expect(await page('?limit=2&offset=4')).toEqual(ids(all).slice(4));
    expect(await page('?limit=2&offset=5')).toEqual([]);
    expect(await page('?offset=3')).toEqual(ids(all).slice(3));
    expect(await page('?offset=0')).toEqual(ids(all));
    expect(await page('?limit=200')).toEqual(ids(all));
    expect(await page('?limit=1&offset=0')).toEqual(ids(all).slice(0, 1));
    // A page carries the same fields, each upload with its signed link.
    const [first] = await listed(cast.owner.token, collectionId, '?limit=1&offset=1');
    expect(first).toEqual({ ...all[1], open_url: expect.any(String) });
    expect((await fetch(first?.open_url as string)).status).toBe(200);
  });

  it('refuses bad values with 422, and keeps the collection’s own refusals', async () => {
    for (const [query, field] of [
      ['?limit=0', 'limit'],
      ['?limit=201', 'limit'],
      ['?limit=-3', 'limit'],
      ['?limit=two', 'limit'],
      ['?limit=2.5', 'limit'],
      ['?offset=-1', 'offset'],
      ['?limit=2&offset=x', 'offset'],
    ] as const) {
      const refused = await api('GET', `/collections/${collectionId}/documents${query}`, { token: cast.owner.token });
      expect(refused.status, query).toBe(422);
      expect(refused.body).toMatchObject({ code: 'validation_failed' });
      expect(problems(refused)[0]?.loc, query).toEqual(['query', field]);
    }
    expect((await api('GET', `/collections/${collectionId}/documents?limit=2`, { token: cast.stranger.token })).status).toBe(403);
    expect((await api('GET', `/collections/${randomUUID()}/documents?limit=2`, { token: cast.owner.token })).status).toBe(404);
  });
});
