import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { encodeDocument } from '#retrieval/sparse.ts';
import { api, skipRealPostgres } from '../support/client.ts';
import { expectServiceError, faultCounts, residue, whileDown } from '../support/faults.ts';
import { type Cast, castUsers } from '../support/fixtures.ts';
import { chunkRows, clearFaults, documentOfJob, ingestFile, injectFault, vectorIndex, waitForJob } from '../support/ingest.ts';
import { askQuestion } from '../support/sse.ts';

// Storage (Supabase Storage) down. The upload itself (502, nothing left) and an original that can
// never be read (the job fails, cleaned up) are in ingest-faults.test.ts.
let cast: Cast;

beforeAll(async () => {
  if (skipRealPostgres) return;
  cast = await castUsers();
});
afterEach(() => clearFaults());

const upstreamFailed = (response: Parameters<typeof expectServiceError>[0]) =>
  expectServiceError(response, 502, 'upstream_failed');

async function collectionWithDocument(name: string) {
  const created = await api('POST', '/collections/', { token: cast.owner.token, body: { name } });
  expect(created.status).toBe(200);
  const collectionId = created.body.id as string;
  const text = `${name}: neap tides come at the quarter moons, when the sun and moon pull at right angles.\n`;
  const job = await ingestFile(cast.owner.token, `${name}.txt`, collectionId, text);
  expect(job.status).toBe('succeeded');
  return { collectionId, documentId: (await documentOfJob(job.job_id)) as string, job };
}

describe.skipIf(skipRealPostgres)('Storage down', () => {
  it('ingest step reading the original: retried, and the job resumes with nothing doubled', async () => {
    const created = await api('POST', '/collections/', { token: cast.owner.token, body: { name: 'reread' } });
    const collectionId = created.body.id as string;
    // The first two reads of the original fail; uploads (POST) go through.
    await injectFault('storage', { match: collectionId, method: 'GET', count: 2 });
    const job = await ingestFile(cast.owner.token, 'docx-tables.docx', collectionId);
    expect((await faultCounts()).storage?.failed).toBe(2);
    expect(job.status).toBe('succeeded');
    const chunks = await chunkRows((await documentOfJob(job.job_id)) as string);
    expect(chunks.map((c) => c.chunk_index)).toEqual([...Array(job.chunks_total).keys()]);
    expect((await vectorIndex().info()).namespaces[collectionId]?.vectorCount).toBe(chunks.length);
  });

  it('documents list (open_url signing): 502, nothing changed', async () => {
    const { collectionId } = await collectionWithDocument('listed');
    const before = await residue(collectionId);
    upstreamFailed(
      await whileDown('storage', () => api('GET', `/collections/${collectionId}/documents`, { token: cast.owner.token }), {
        match: '/object/sign',
      }),
    );
    expect(await residue(collectionId)).toEqual(before);
    const listed = await api('GET', `/collections/${collectionId}/documents`, { token: cast.owner.token });
    expect(listed.body[0]?.open_url).toMatch(/token=/);
  });

  it('query/search and query/stream signing an image link: 502 before any event', async () => {
    const { collectionId, documentId } = await collectionWithDocument('figured');
    // A figure's passage, as the ingest worker indexes one, of a document that exists (retrieval leaves out
    // passages of documents gone or being deleted): retrieval signs its image_path. A hybrid index needs a
    // dense vector too; the document's own passage, about the same tides, lends its.
    const namespace = vectorIndex().namespace(collectionId);
    const [passage] = (await namespace.range({ cursor: 0, limit: 1, includeVectors: true })).vectors;
    await namespace.upsert({
      id: 'figure-1',
      ...(passage?.vector?.length ? { vector: passage.vector } : {}),
      sparseVector: encodeDocument('A chart of neap tides at the quarter moons.'),
      metadata: {
        document_id: documentId,
        source: 'figure.pdf',
        chunk_index: 0,
        chunk_type: 'image_description',
        text: 'A chart of neap tides at the quarter moons.',
        image_path: `${collectionId}/${documentId}/images/001.png`,
      },
    });
    const question = { question: 'neap tides quarter moons chart', collection_id: collectionId };
    const found = await api('POST', '/query/search', { token: cast.owner.token, body: question });
    expect(found.body.sources.some((s: { chunk_type: string }) => s.chunk_type === 'image_description')).toBe(true);
    await injectFault('storage', { match: '/object/sign' });
    upstreamFailed(await api('POST', '/query/search', { token: cast.owner.token, body: question }));
    const streamed = await askQuestion(cast.owner.token, question);
    upstreamFailed({ status: streamed.status, body: streamed.json });
  });

  it('rechunk: a copy refused is 502 with nothing started; the next call starts it and the old cut goes', async () => {
    const { collectionId, documentId } = await collectionWithDocument('rechunked');
    const config = { chunk_size: 300, retrieval_strategy: 'similarity' };
    expect((await api('PUT', `/collections/${collectionId}/config`, { token: cast.admin.token, body: config })).status).toBe(200);
    const before = await residue(collectionId);
    const path = `/collections/${collectionId}/rechunk` as const;
    upstreamFailed(await whileDown('storage', () => api('POST', path, { token: cast.admin.token }), { match: '/object/copy' }));
    expect(await residue(collectionId)).toEqual(before);

    const started = await api('POST', path, { token: cast.admin.token });
    expect(started.body.jobs).toEqual([expect.objectContaining({ document_id: documentId })]);
    const job = await waitForJob(cast.admin.token, started.body.jobs[0]?.job_id as string);
    expect(job.status).toBe('succeeded');
    const after = await residue(collectionId);
    expect(after).toMatchObject({ documents: 1, objects: before.objects, vectors: after.chunks });
    expect(await chunkRows(documentId)).toEqual([]);
  });

  it('document delete: 502 with the vectors gone and the row (marked, no longer listed) and files kept; a second DELETE finishes', async () => {
    const { collectionId, documentId, job } = await collectionWithDocument('deleted');
    const path = `/collections/${collectionId}/documents/${documentId}` as const;
    upstreamFailed(await whileDown('storage', () => api('DELETE', path, { token: cast.owner.token })));
    const left = await residue(collectionId);
    expect(left).toMatchObject({ documents: 1, chunks: job.chunks_total, vectors: 0 });
    expect(left.objects).toBeGreaterThan(0);
    expect((await api('GET', `/collections/${collectionId}/documents`, { token: cast.owner.token })).body).toEqual([]);
    expect((await api('DELETE', path, { token: cast.owner.token })).status).toBe(200);
    expect(await residue(collectionId)).toMatchObject({ documents: 0, chunks: 0, objects: 0, vectors: 0 });
  });

  it('collection delete: 502 with the namespace gone and the rows (marked, no longer reached) and files kept; a second DELETE finishes', async () => {
    const { collectionId } = await collectionWithDocument('dropped');
    const path = `/collections/${collectionId}` as const;
    upstreamFailed(await whileDown('storage', () => api('DELETE', path, { token: cast.owner.token })));
    const left = await residue(collectionId);
    expect(left).toMatchObject({ documents: 1, vectors: 0 });
    expect(left.objects).toBeGreaterThan(0);
    const documents = `${path}/documents` as const;
    expect((await api('GET', documents, { token: cast.owner.token })).status).toBe(404);
    expect((await api('GET', '/collections/', { token: cast.owner.token })).body.map((c: { id: string }) => c.id)).not.toContain(
      collectionId,
    );
    expect((await api('DELETE', path, { token: cast.owner.token })).status).toBe(200);
    expect(await residue(collectionId)).toMatchObject({ documents: 0, chunks: 0, objects: 0, vectors: 0 });
    expect((await api('GET', documents, { token: cast.owner.token })).status).toBe(404);
  });
});
