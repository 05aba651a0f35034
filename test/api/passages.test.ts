import { beforeAll, describe, expect, it } from 'vitest';
import { api, db, problems, type Query } from '../support/client.ts';
import { type Cast, castUsers, sharedCollection } from '../support/fixtures.ts';
import { documentOfJob, ingestFile } from '../support/ingest.ts';

// What a citation opens (issue 23): the cited chunk with its neighbours, through the real ingest worker's chunks,
// under the access rules of search (the access matrix has every caller; these are the shapes and the edges).
let cast: Cast;
let collectionId: string;
let otherCollectionId: string;
let guideId: string;
let pdfId: string;
let personalId: string;

/** Sections far longer than the chunk size, so that each is several chunks with its own heading path. */
const GUIDE = ['Setup', 'Calibration', 'Maintenance']
  .map(
    (section, s) =>
      `# ${section}\n\n${Array.from({ length: 12 }, (_, i) => `Step ${s}.${i} of the ${section.toLowerCase()} asks for care and patience.`).join(' ')}\n`,
  )
  .join('\n');

const passages = <P extends string>(token: string, path: P) => api('GET', path, { token });
const inCollection = (documentId: string, index: number | string, query: Query = '') =>
  `/collections/${collectionId}/documents/${documentId}/passages/${index}${query}` as const;

beforeAll(async () => {
  cast = await castUsers();
  ({ collectionId } = await sharedCollection(cast, 'Passages'));
  otherCollectionId = (await api('POST', '/collections/', { token: cast.owner.token, body: { name: 'Other' } })).body.id;
  const configured = await api('PUT', `/collections/${collectionId}/config`, {
    token: cast.admin.token,
    body: { chunk_size: 200, retrieval_strategy: 'similarity' },
  });
  expect(configured.status).toBe(200);
  const [guide, pdf, personal] = await Promise.all([
    ingestFile(cast.owner.token, 'guide.md', collectionId, GUIDE),
    ingestFile(cast.owner.token, 'multi-column-2p.pdf', collectionId),
    ingestFile(cast.memberQuery.token, 'notes.md', undefined, GUIDE),
  ]);
  for (const job of [guide, pdf, personal]) expect(job.status, job.error_message ?? '').toBe('succeeded');
  guideId = (await documentOfJob(guide.job_id)) as string;
  pdfId = (await documentOfJob(pdf.job_id)) as string;
  personalId = (await documentOfJob(personal.job_id)) as string;
}, 120_000);

describe('GET /collections/{id}/documents/{document_id}/passages/{chunk_index}', () => {
  it('opens a searched source with its neighbours, in document order, the cited text as the source shows it', async () => {
    const search = await api('POST', '/query/search', {
      token: cast.memberQuery.token,
      body: { question: 'calibration step 6 care', collection_id: collectionId, top_k: 1 },
    });
    const [source] = search.body.sources as { document_id: string; chunk_index: number; text: string; heading: string }[];
    expect(source?.document_id).toBe(guideId);
    const cited = source?.chunk_index as number;
    expect(cited).toBeGreaterThan(0);

    const opened = await passages(cast.memberQuery.token, inCollection(guideId, cited, '?around=1'));
    expect(opened.status).toBe(200);
    expect(opened.body.chunk_index).toBe(cited);
    expect(opened.body.document).toMatchObject({ id: guideId, name: 'guide.md', type: 'md' });
    expect(opened.body.document.open_url).toMatch(/^https?:\/\//);
    expect(opened.body.passages.map((p) => p.chunk_index)).toEqual([cited - 1, cited, cited + 1]);
    const middle = opened.body.passages[1];
    expect(middle).toMatchObject({ chunk_type: 'text', text: source?.text, heading: source?.heading, page: null });
    // The neighbours are the text around it: the document read in order gives back its words in order.
    const rows = await db()<{ text: string }[]>`
      select text from document_chunks where document_id = ${guideId} and chunk_index between ${cited - 1} and ${cited + 1}
       order by chunk_index`;
    expect(opened.body.passages.map((p) => p.text)).toEqual(rows.map((r) => r.text));
  });

  it('gives fewer at the ends, none with around=0, two by default', async () => {
    const first = await passages(cast.owner.token, inCollection(guideId, 0, '?around=3'));
    expect(first.body.passages.map((p) => p.chunk_index)).toEqual([0, 1, 2, 3]);
    expect(first.body.passages[0]?.heading).toBe('Setup');
    const alone = await passages(cast.owner.token, inCollection(guideId, 4, '?around=0'));
    expect(alone.body.passages.map((p) => p.chunk_index)).toEqual([4]);
    const byDefault = await passages(cast.owner.token, inCollection(guideId, 4));
    expect(byDefault.body.passages.map((p) => p.chunk_index)).toEqual([2, 3, 4, 5, 6]);
    const [{ count }] = (await db()`select count(*)::int as count from document_chunks where document_id = ${guideId}`) as [
      { count: number },
    ];
    const last = await passages(cast.owner.token, inCollection(guideId, count - 1));
    expect(last.body.passages.map((p) => p.chunk_index)).toEqual([count - 3, count - 2, count - 1]);
  });

  it('says the page of a PDF passage, as its source does', async () => {
    // The first chunk that starts on page 2 (a chunk running across pages is cited by its first).
    const rows = await db()<{ chunk_index: number; page: number }[]>`
      select chunk_index, coalesce((metadata->>'page')::int, (metadata->'pages'->>0)::int) as page
        from document_chunks where document_id = ${pdfId} order by chunk_index`;
    const turn = rows.find((row) => row.page === 2)?.chunk_index as number;
    expect(turn).toBeGreaterThan(0);
    const opened = await passages(cast.owner.token, inCollection(pdfId, turn, '?around=1'));
    expect(opened.status).toBe(200);
    expect(opened.body.document.type).toBe('pdf');
    expect(opened.body.passages.map((p) => [p.chunk_index, p.page])).toEqual([
      [turn - 1, 1],
      [turn, 2],
      ...(turn + 1 < rows.length ? [[turn + 1, 2]] : []),
    ]);
  });

  it('is 404 for a chunk that is not indexed, and for a document of another collection or a missing one', async () => {
    for (const path of [
      inCollection(guideId, 10_000),
      `/collections/${otherCollectionId}/documents/${guideId}/passages/0`,
      inCollection(personalId, 0),
      inCollection('00000000-0000-4000-8000-000000000000', 0),
      inCollection('not-a-uuid', 0),
    ] as const) {
      const response = await passages(cast.owner.token, path);
      expect(response.status, path).toBe(404);
      expect(response.body).toMatchObject({ code: 'not_found' });
    }
    // A pending chunk is not searchable yet, so it is not shown either.
    await db()`update document_chunks set state = 'pending' where document_id = ${guideId} and chunk_index = 1`;
    try {
      expect((await passages(cast.owner.token, inCollection(guideId, 1))).status).toBe(404);
      const around = await passages(cast.owner.token, inCollection(guideId, 0));
      expect(around.body.passages.map((p) => p.chunk_index)).toEqual([0, 2]);
    } finally {
      await db()`update document_chunks set state = 'done' where document_id = ${guideId} and chunk_index = 1`;
    }
  });

  it('refuses a bad chunk index or neighbour count with 422, naming it', async () => {
    for (const [path, field] of [
      [inCollection(guideId, -1), 'chunk_index'],
      [inCollection(guideId, 'first'), 'chunk_index'],
      [inCollection(guideId, 0, '?around=11'), 'around'],
      [inCollection(guideId, 0, '?around=-1'), 'around'],
    ] as const) {
      const response = await api('GET', path, { token: cast.owner.token });
      expect(response.status, path).toBe(422);
      expect(problems(response)[0]?.loc).toContain(field);
    }
  });
});

describe('GET /ingest/documents/{document_id}/passages/{chunk_index}', () => {
  it('opens its owner’s personal document, and is 404 to anyone else', async () => {
    const opened = await passages(cast.memberQuery.token, `/ingest/documents/${personalId}/passages/1?around=1`);
    expect(opened.status).toBe(200);
    expect(opened.body.passages.map((p) => p.chunk_index)).toEqual([0, 1, 2]);
    expect(opened.body.document).toMatchObject({ id: personalId, name: 'notes.md' });
    for (const token of [cast.owner.token, cast.stranger.token]) {
      expect((await passages(token, `/ingest/documents/${personalId}/passages/1`)).status).toBe(404);
    }
    // A collection's document is not personal, even to its owner.
    expect((await passages(cast.owner.token, `/ingest/documents/${guideId}/passages/0`)).status).toBe(404);
  });
});
