import { beforeAll, describe, expect, it } from 'vitest';
import { api, db, type Schema } from '../support/client.ts';
import { residue } from '../support/faults.ts';
import { type Cast, castUsers } from '../support/fixtures.ts';
import { chunkRows, documentOfJob, ingestFile, objectsUnder, waitForJob } from '../support/ingest.ts';

// A collection's chunk_size changed: POST /collections/{id}/rechunk cuts its earlier documents again from
// their stored originals, as jobs the admin watches, and nothing of the old cut is left.
let cast: Cast;
let collectionId: string;
const TIDES = Array.from(
  { length: 12 },
  (_, i) => `Paragraph ${i + 1}. Neap tides come at the quarter moons, when the sun and the moon pull at right angles.`,
).join('\n\n');

beforeAll(async () => {
  cast = await castUsers();
  const created = await api('POST', '/collections/', { token: cast.owner.token, body: { name: 'Rechunked' } });
  collectionId = created.body.id;
  for (const [name, content] of [
    ['handbook-1p.docx', undefined],
    ['tides.txt', TIDES],
  ] as const) {
    const job = await ingestFile(cast.owner.token, name, collectionId, content);
    expect(job.status, job.error_message ?? '').toBe('succeeded');
  }
}, 120_000);

const listed = async () => (await api('GET', `/collections/${collectionId}/documents`, { token: cast.owner.token })).body;

describe('POST /collections/{id}/rechunk', () => {
  it('starts nothing while every document is at the current chunk_size', async () => {
    const response = await api('POST', `/collections/${collectionId}/rechunk`, { token: cast.admin.token });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ jobs: [] });
  });

  it('re-chunks every document from its original as a job the admin watches, and leaves nothing of the old cut', async () => {
    const before = await listed();
    const put = await api('PUT', `/collections/${collectionId}/config`, {
      token: cast.admin.token,
      body: { chunk_size: 200, retrieval_strategy: 'similarity' },
    });
    expect(put.status).toBe(200);

    const started = await api('POST', `/collections/${collectionId}/rechunk`, { token: cast.admin.token });
    expect(started.status).toBe(200);
    expect(started.body.jobs.map((j) => j.document_id).sort()).toEqual(before.map((d) => d.id).sort());
    expect(started.body.jobs.map((j) => j.source).sort()).toEqual(['handbook-1p.docx', 'tides.txt']);
    // A second call while they run starts nothing more.
    const again = await api('POST', `/collections/${collectionId}/rechunk`, { token: cast.admin.token });
    expect(again.body).toEqual({ jobs: [] });
    // The jobs are the admin's: the owner does not see them.
    const [first] = started.body.jobs;
    expect((await api('GET', `/ingest/jobs/${first?.job_id}`, { token: cast.owner.token })).status).toBe(404);

    for (const { job_id } of started.body.jobs) {
      const job = await waitForJob(cast.admin.token, job_id);
      expect(job.status, job.error_message ?? '').toBe('succeeded');
      const chunks = await chunkRows((await documentOfJob(job_id)) as string);
      expect(chunks.length).toBe(job.chunks_total);
      expect(Math.max(...chunks.map((c) => (c.text ?? '').length))).toBeLessThanOrEqual(200);
    }

    // The same documents by name and upload time, now cut smaller; the old ones are gone.
    const after = await listed();
    expect(after.map((d) => [d.name, d.created_at]).sort()).toEqual(before.map((d) => [d.name, d.created_at]).sort());
    for (const old of before) {
      expect(after.some((d) => d.id === old.id)).toBe(false);
      expect(await objectsUnder(`${collectionId}/${old.id}`)).toEqual([]);
      expect(await chunkRows(old.id)).toEqual([]);
    }
    const tides = (name: string, list: Schema<'Document'>[]) => list.find((d) => d.name === name)?.chunk_count ?? 0;
    expect(tides('tides.txt', after)).toBeGreaterThan(tides('tides.txt', before));

    // Exactly the new chunks' vectors are in the namespace, and one original per document in Storage.
    const left = await residue(collectionId);
    expect(left.documents).toBe(2);
    expect(left.vectors).toBe(left.chunks);
    expect(left.chunks).toBe(after.reduce((n, d) => n + d.chunk_count, 0));
    const search = await api('POST', '/query/search', {
      token: cast.owner.token,
      body: { question: 'neap tides quarter moons', collection_id: collectionId },
    });
    const [top] = search.body.sources;
    expect(top).toMatchObject({ source: 'tides.txt' });
    expect(top?.text.length).toBeLessThanOrEqual(200);
    expect(after.find((d) => d.name === 'tides.txt')?.id).toBe(top?.document_id);
  }, 120_000);

  it('is 404 for a collection that does not exist, and needs an administrator', async () => {
    const missing = await api('POST', '/collections/00000000-0000-4000-8000-000000000000/rechunk', { token: cast.admin.token });
    expect(missing.status).toBe(404);
    const owner = await api('POST', `/collections/${collectionId}/rechunk`, { token: cast.owner.token });
    expect(owner.status).toBe(403);
    const rows = await db()<{ n: number }[]>`
      select count(*)::int as n from ingest_jobs where replaces_document_id is not null and user_id = ${cast.owner.id}`;
    expect(rows[0]?.n).toBe(0);
  });
});
