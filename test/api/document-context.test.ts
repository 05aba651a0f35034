import { strToU8 } from 'fflate';
import { beforeAll, describe, expect, it } from 'vitest';
import { namespaceFor } from '#core/namespaces.ts';
import { api, db } from '../support/client.ts';
import { type Cast, castUsers } from '../support/fixtures.ts';
import { pdfOf, showText } from '../support/hostile-pdfs.ts';
import { documentOfJob, ingestFile, vectorIndex, vectorsOf, waitForJob } from '../support/ingest.ts';

// Passages that know their document (issue 22), through the real ingest worker: two reports whose pages say the
// same words, told apart only by the titles their files give themselves. Each chunk is indexed under its
// document's title and date, and a source still shows the passage alone.
let cast: Cast;
let collectionId: string;
const BODY = 'Gross margin was 41 percent in the quarter';

/** A one-page PDF showing BODY, with an Info /Title and /CreationDate. */
function report(title: string, created: string): Uint8Array {
  const content = showText(BODY);
  return pdfOf(
    [
      { dict: '<< /Type /Catalog /Pages 2 0 R >>' },
      { dict: '<< /Type /Pages /Count 1 /Kids [3 0 R] >>' },
      { dict: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>' },
      { dict: `<< /Length ${content.length} >>`, stream: strToU8(content) },
      { dict: '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>' },
      { dict: `<< /Title (${title}) /CreationDate (${created}) >>` },
    ],
    '/Info 6 0 R ',
  );
}

const documents = new Map<string, string>();

beforeAll(async () => {
  cast = await castUsers();
  const created = await api('POST', '/collections/', { token: cast.owner.token, body: { name: 'Reports' } });
  collectionId = created.body.id;
  for (const [name, title, date] of [
    ['q3-a.pdf', 'Zanzibar Holdings Quarterly Report', 'D:20241030093000Z'],
    ['q3-b.pdf', 'Quokka Industries Quarterly Report', 'D:20241105120000Z'],
  ] as const) {
    const job = await ingestFile(cast.owner.token, name, collectionId, report(title, date));
    expect(job.status, job.error_message ?? '').toBe('succeeded');
    documents.set(name, (await documentOfJob(job.job_id)) as string);
  }
}, 120_000);

const search = async (question: string) =>
  (await api('POST', '/query/search', { token: cast.owner.token, body: { question, collection_id: collectionId, top_k: 2 } }))
    .body.sources as { source: string; text: string; document_id: string }[];

describe('a passage indexed with its document', () => {
  it('is found by its document’s title, and shows the passage alone', async () => {
    const quokka = await search("What was Quokka Industries' gross margin?");
    expect(quokka[0]).toMatchObject({ source: 'q3-b.pdf', text: BODY, document_id: documents.get('q3-b.pdf') });
    const zanzibar = await search('Zanzibar Holdings gross margin');
    expect(zanzibar[0]).toMatchObject({ source: 'q3-a.pdf', text: BODY });
    // The date is indexed in words, as questions say it.
    expect((await search('the report dated November 5, 2024'))[0]?.source).toBe('q3-b.pdf');
  });

  it('keeps its document’s title and date on the row and on every vector', async () => {
    const id = documents.get('q3-a.pdf') as string;
    const [row] = await db()<{ title: string | null; document_date: string | null; context_read: boolean }[]>`
      select title, document_date, context_read from documents where id = ${id}`;
    expect(row).toEqual({ title: 'Zanzibar Holdings Quarterly Report', document_date: '2024-10-30', context_read: true });
    const listed = await api('GET', `/collections/${collectionId}/documents`, { token: cast.owner.token });
    expect(listed.body.find((d: { id: string }) => d.id === id)).toMatchObject({
      name: 'q3-a.pdf',
      title: 'Zanzibar Holdings Quarterly Report',
      document_date: '2024-10-30',
    });
    const namespace = namespaceFor(collectionId, cast.owner.id);
    const ids = await vectorsOf(namespace, id);
    expect(ids.length).toBeGreaterThan(0);
    const vectors = await vectorIndex().namespace(namespace).fetch(ids, { includeMetadata: true });
    for (const vector of vectors) {
      expect(vector?.metadata).toMatchObject({
        doc_title: 'Zanzibar Holdings Quarterly Report (q3-a)',
        doc_date: '2024-10-30',
        text: BODY,
      });
    }
  });

  it('is given to a document indexed before by POST /collections/{id}/rechunk, at the same chunk size', async () => {
    const old = documents.get('q3-b.pdf') as string;
    // As a document indexed before issue 22 is: no context read.
    await db()`update documents set title = null, document_date = null, context_read = false where id = ${old}`;
    const started = await api('POST', `/collections/${collectionId}/rechunk`, { token: cast.admin.token });
    expect(started.status).toBe(200);
    expect(started.body.jobs.map((j) => j.document_id)).toEqual([old]);
    const job = await waitForJob(cast.admin.token, started.body.jobs[0]?.job_id as string);
    expect(job.status, job.error_message ?? '').toBe('succeeded');
    const [row] = await db()<{ title: string | null; context_read: boolean }[]>`
      select title, context_read from documents where id = ${(await documentOfJob(job.job_id)) as string}`;
    expect(row).toEqual({ title: 'Quokka Industries Quarterly Report', context_read: true });
    // Nothing is left to give it to.
    expect((await api('POST', `/collections/${collectionId}/rechunk`, { token: cast.admin.token })).body).toEqual({ jobs: [] });
  }, 120_000);
});
