import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { api, db, skipRealPostgres } from '../support/client.ts';
import { expectServiceError, residue, whileDown } from '../support/faults.ts';
import { type Cast, castUsers } from '../support/fixtures.ts';
import { clearFaults, documentOfJob, ingestFile, injectFault } from '../support/ingest.ts';
import { askQuestion } from '../support/sse.ts';

// The vector index (Upstash Vector) down. The ingest upsert, failing for a while (the job resumes)
// or on every retry (the job fails), is in ingest-faults.test.ts.
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
  const text = `${name}: a tidal bore is a wave that travels up a river against the current.\n`;
  const job = await ingestFile(cast.owner.token, `${name}.txt`, collectionId, text);
  expect(job.status).toBe('succeeded');
  return { collectionId, documentId: (await documentOfJob(job.job_id)) as string };
}

const evaluations = async (userId: string) =>
  (await db()<{ n: number }[]>`select count(*)::int as n from evaluations where user_id = ${userId}`)[0]?.n;

describe.skipIf(skipRealPostgres)('Vector index down', () => {
  it('query/search and query/stream: 502 before any event, nothing recorded', async () => {
    const { collectionId } = await collectionWithDocument('searched');
    const before = await evaluations(cast.owner.id);
    const question = { question: 'What is a tidal bore?', collection_id: collectionId };
    await injectFault('vector');
    upstreamFailed(await api('POST', '/query/search', { token: cast.owner.token, body: question }));
    const streamed = await askQuestion(cast.owner.token, question);
    await clearFaults();
    expect(streamed.contentType).toMatch(/^application\/json/);
    upstreamFailed({ status: streamed.status, body: streamed.json });
    expect(await evaluations(cast.owner.id)).toBe(before);
    expect((await api('POST', '/query/search', { token: cast.owner.token, body: question })).body.sources).toHaveLength(1);
  });

  it('document delete: 502 with nothing removed, but no longer listed or searched; the same DELETE succeeds once it is back', async () => {
    const { collectionId, documentId } = await collectionWithDocument('kept');
    const before = await residue(collectionId);
    const path = `/collections/${collectionId}/documents/${documentId}` as const;
    upstreamFailed(await whileDown('vector', () => api('DELETE', path, { token: cast.owner.token })));
    expect(await residue(collectionId)).toEqual(before);
    // Marked before its vectors were to go: its vectors are still in the index, and still not searched.
    expect((await api('GET', `/collections/${collectionId}/documents`, { token: cast.owner.token })).body).toEqual([]);
    const question = { question: 'What is a tidal bore?', collection_id: collectionId };
    const searched = await api('POST', '/query/search', { token: cast.owner.token, body: question });
    expect(searched.status).toBe(200);
    expect(searched.body.sources).toEqual([]);
    expect((await api('DELETE', path, { token: cast.owner.token })).status).toBe(200);
    expect(await residue(collectionId)).toMatchObject({ documents: 0, chunks: 0, objects: 0, vectors: 0 });
  });

  it('collection delete: 502 with nothing removed, but no longer reached; the same DELETE succeeds once it is back', async () => {
    const { collectionId } = await collectionWithDocument('intact');
    const before = await residue(collectionId);
    const path = `/collections/${collectionId}` as const;
    upstreamFailed(await whileDown('vector', () => api('DELETE', path, { token: cast.owner.token })));
    expect(await residue(collectionId)).toEqual(before);
    // Marked before its namespace was to go: gone for everything but the DELETE that finishes it.
    expect((await api('GET', `${path}/documents`, { token: cast.owner.token })).status).toBe(404);
    expect((await api('DELETE', path, { token: cast.owner.token })).status).toBe(200);
    expect(await residue(collectionId)).toMatchObject({ documents: 0, chunks: 0, objects: 0, vectors: 0 });
  });
});
