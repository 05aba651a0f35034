import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiResponse } from '../support/api-call.ts';
import { apiClient, ask, type SmokeUser, users } from './clients.ts';
import { target } from './target.ts';

// A deployment's smoke test: one journey through every part (auth, collections, ingestion through
// the queue and the ingest worker, storage, the vector index, search, the answer stream, sharing,
// sessions, deletion), over HTTP only. `npm run test:deployed` points it at a real deployment; the
// pglite run points it at the local one, so it is known to pass before anyone deploys.
const where = target();
const api = apiClient(where);
const people = users(where);

const DOCUMENT = `# The Marrow Island light

The Marrow Island lighthouse was built in 1887 by the engineer Tessa Vaughn. Its lamp burned whale oil
until 1911, when it was converted to kerosene, and it was electrified in 1936.

## Keepers

Eleven keepers served on the island. The longest-serving was Osric Penhallow, who kept the light for
thirty-one years and wrote a logbook of every storm between 1902 and 1933.
`;

// Real providers take longer than the devstack; these bound a healthy deployment, not a fast one.
const JOB_TIMEOUT_MS = 180_000;

const expectStatus = (answer: ApiResponse, status: number) => expect(answer.status, JSON.stringify(answer.body)).toBe(status);

async function waitForJob(token: string, jobId: string) {
  const deadline = Date.now() + JOB_TIMEOUT_MS;
  for (;;) {
    const job = await api('GET', `/ingest/jobs/${jobId}`, token);
    expectStatus(job, 200);
    if (['succeeded', 'partial', 'failed'].includes(job.body.status)) return job.body;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${job.body.status}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

describe(`the deployment at ${where.apiUrl}`, () => {
  let owner: SmokeUser;
  let member: SmokeUser;
  let collectionId: string;

  beforeAll(async () => {
    [owner, member] = await Promise.all([people.create('owner'), people.create('member')]);
  });
  afterAll(async () => {
    if (collectionId) await api('DELETE', `/collections/${collectionId}`, owner.token);
    await people.removeAll();
  });

  it('is up, describes itself, and refuses a request without a token', async () => {
    expect(await api('GET', '/health')).toMatchObject({ status: 200, body: { status: 'ok' } });
    const openapi = await api('GET', '/openapi.json');
    expectStatus(openapi, 200);
    expect(Object.keys(openapi.body.paths)).toContain('/query');
    const refused = await api('GET', '/collections/');
    expect(refused).toMatchObject({ status: 401, body: { code: 'unauthenticated' } });
  });

  it('creates a collection and ingests a document through the queue into the index', async () => {
    const created = await api('POST', '/collections/', owner.token, { name: `Smoke ${new Date().toISOString()}` });
    expectStatus(created, 200);
    collectionId = created.body.id;

    const form = new FormData();
    form.append('file', new Blob([DOCUMENT], { type: 'text/markdown' }), 'marrow-island.md');
    const accepted = await api('POST', `/ingest/?collection_id=${collectionId}`, owner.token, form);
    expectStatus(accepted, 200);
    const job = await waitForJob(owner.token, accepted.body.job_id);
    expect(job, JSON.stringify(job)).toMatchObject({ status: 'succeeded' });
    expect(job.chunks_total).toBeGreaterThan(0);
    expect(job.chunks_processed).toBe(job.chunks_total);

    const documents = await api('GET', `/collections/${collectionId}/documents`, owner.token);
    expectStatus(documents, 200);
    expect(documents.body).toHaveLength(1);
    const original = await fetch(documents.body[0]?.open_url as string);
    expect(original.status).toBe(200);
    expect(await original.text()).toBe(DOCUMENT);
  });

  it('finds the document and streams an answer that cites it', async () => {
    const question = { question: 'Who was the longest-serving keeper of the Marrow Island light?', collection_id: collectionId };
    const search = await api('POST', '/query/search', owner.token, question);
    expectStatus(search, 200);
    expect(search.body.sources[0]).toMatchObject({ source: 'marrow-island.md' });

    const answer = await ask(where, owner.token, question);
    expect(answer.status).toBe(200);
    const kinds = answer.events.map((event) => event.event);
    expect(kinds[0]).toBe('metadata');
    expect(kinds.at(-1)).toBe('done');
    expect(kinds).toContain('token');
    const [metadata] = answer.events;
    expect(metadata?.event === 'metadata' && metadata.data.sources[0]).toMatchObject({ source: 'marrow-island.md' });
  });

  it('shares the collection: a member joins with query rights, may ask but not add documents', async () => {
    const link = await api('POST', `/collections/${collectionId}/shares`, owner.token, { permission: 'query' });
    expectStatus(link, 200);
    const joined = await api('POST', `/collections/join/${link.body.share_token}`, member.token);
    expect(joined).toMatchObject({ status: 200, body: { permission: 'query' } });

    const search = await api('POST', '/query/search', member.token, { question: 'lighthouse', collection_id: collectionId });
    expectStatus(search, 200);
    const form = new FormData();
    form.append('file', new Blob(['not allowed']), 'note.txt');
    expect((await api('POST', `/ingest/?collection_id=${collectionId}`, member.token, form)).status).toBe(403);

    const session = await api('POST', `/chat/${collectionId}/sessions`, member.token, { title: 'Keepers' });
    expectStatus(session, 200);
    const theirs = await api('GET', `/chat/${collectionId}/sessions/${session.body.id}`, owner.token);
    expect(theirs.status).toBe(404);
  });

  it('deletes the collection, and with it everything in it', async () => {
    expectStatus(await api('DELETE', `/collections/${collectionId}`, owner.token), 200);
    expect((await api('GET', `/collections/${collectionId}/documents`, owner.token)).status).toBe(404);
    const search = await api('POST', '/query/search', member.token, { question: 'lighthouse', collection_id: collectionId });
    expect(search.status).toBe(404);
    collectionId = '';
  });
});
