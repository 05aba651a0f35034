import { beforeAll, describe, expect, it } from 'vitest';
import { api, stack } from '../support/client.ts';
import { type Cast, castUsers, sharedCollection } from '../support/fixtures.ts';
import { ingestFile, waitForJob } from '../support/ingest.ts';

let cast: Cast;
let collectionId: string;
const articleUrl = () => `${stack.pagesUrl}/article.html`;

beforeAll(async () => {
  cast = await castUsers();
  ({ collectionId } = await sharedCollection(cast, 'Search'));
  const page = await api('POST', '/ingest/url', {
    token: cast.owner.token,
    body: { url: articleUrl(), collection_id: collectionId },
  });
  const jobs = await Promise.all([
    waitForJob(cast.owner.token, page.body.job_id),
    ingestFile(cast.owner.token, 'stanley-cups.csv', collectionId),
    ingestFile(cast.owner.token, 'scan-linn-2col.pdf', collectionId),
    ingestFile(cast.owner.token, 'multi-column-2p.pdf', collectionId),
    ingestFile(cast.owner.token, 'install-guide.md', collectionId, GUIDE),
  ]);
  for (const job of jobs) expect(job.status, job.error_message ?? '').toBe('succeeded');
}, 120_000);

const search = (token: string, body: Record<string, unknown>) => api('POST', '/query/search', { token, body });

// The first section is longer than a chunk, so the Linux section starts chunks of its own.
const GUIDE = `# Installation

${Array.from({ length: 30 }, (_, i) => `General note ${i} applies to every platform alike.`).join(' ')}

## On Linux

Install the zephyrine toolkit with the quorvex package manager, then run the calibration wizard.
`;

const documentId = async (name: string) => {
  const documents = await api('GET', `/collections/${collectionId}/documents`, { token: cast.owner.token });
  return documents.body.find((d: { name: string }) => d.name === name)?.id as string;
};

describe('POST /query/search', () => {
  it('returns the best sources first, with the contract fields and latencies', async () => {
    const response = await search(cast.memberQuery.token, {
      question: 'How does a tidal barrage work?',
      collection_id: collectionId,
    });
    expect(response.status).toBe(200);
    expect(Number.isInteger(response.body.embedding_latency_ms)).toBe(true);
    expect(Number.isInteger(response.body.retrieval_latency_ms)).toBe(true);
    const [top] = response.body.sources;
    expect(top).toMatchObject({ source: articleUrl(), chunk_type: 'text', image_url: null, chunk_index: expect.any(Number) });
    expect(top?.text).toMatch(/barrage/i);
    const scores = response.body.sources.map((s: { score: number }) => s.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it('says where each passage sits: its document, its page, and its heading path', async () => {
    const guide = await search(cast.owner.token, { question: 'zephyrine toolkit quorvex', collection_id: collectionId });
    expect(guide.body.sources[0]).toMatchObject({
      source: 'install-guide.md',
      document_id: await documentId('install-guide.md'),
      page: null,
      heading: 'Installation > On Linux',
    });

    const paper = await search(cast.owner.token, {
      question: '3.1 Overview dense passage retriever',
      collection_id: collectionId,
      top_k: 10,
    });
    const fromPaper = paper.body.sources.filter((s: { source: string }) => s.source === 'multi-column-2p.pdf');
    expect(fromPaper.length).toBeGreaterThan(0);
    const pdfId = await documentId('multi-column-2p.pdf');
    for (const source of fromPaper) {
      expect(source.document_id).toBe(pdfId);
      expect([1, 2]).toContain(source.page);
    }
    expect(fromPaper.map((s) => s.page)).toContain(2);

    const scan = await search(cast.owner.token, {
      question: 'LinnSequencer MIDI sequence recorder',
      collection_id: collectionId,
    });
    const image = scan.body.sources.find((s: { chunk_type: string }) => s.chunk_type === 'image_description');
    expect(image).toMatchObject({ page: 1, document_id: await documentId('scan-linn-2col.pdf') });
  });

  it('honours top_k', async () => {
    const response = await search(cast.owner.token, { question: 'Stanley Cups team', collection_id: collectionId, top_k: 1 });
    expect(response.body.sources).toHaveLength(1);
    expect(response.body.sources[0]?.source).toBe('stanley-cups.csv');
  });

  it('returns scanned pages as image_description sources with a working signed image_url', async () => {
    const response = await search(cast.owner.token, {
      question: 'LinnSequencer MIDI sequence recorder',
      collection_id: collectionId,
    });
    const image = response.body.sources.find((s: { chunk_type: string }) => s.chunk_type === 'image_description');
    expect(image).toMatchObject({ source: 'scan-linn-2col.pdf', image_url: expect.stringContaining('token=') });
    const png = await fetch(image?.image_url as string);
    expect(png.status).toBe(200);
    expect([...new Uint8Array(await png.arrayBuffer()).subarray(1, 4)]).toEqual([0x50, 0x4e, 0x47]);
  });

  it('gives each kind of caller the contract status', async () => {
    const body = { question: 'tides', collection_id: collectionId };
    for (const user of [cast.owner, cast.memberQuery, cast.memberIngest])
      expect((await search(user.token, body)).status).toBe(200);
    for (const user of [cast.stranger, cast.admin]) expect((await search(user.token, body)).status).toBe(403);
    expect((await search(cast.owner.token, { ...body, collection_id: crypto.randomUUID() })).status).toBe(404);
    expect((await api('POST', '/query/search', { body })).status).toBe(401);
  });

  it.each([
    { what: 'an empty question', body: { question: '' } },
    { what: 'a question over 5000 characters', body: { question: 'x'.repeat(5001) } },
    { what: 'top_k 0', body: { question: 'tides', top_k: 0 } },
    { what: 'top_k 51', body: { question: 'tides', top_k: 51 } },
    { what: 'a fractional top_k', body: { question: 'tides', top_k: 2.5 } },
  ])('422 for $what', async ({ body }) => {
    const response = await search(cast.owner.token, { collection_id: collectionId, ...body });
    expect(response.status).toBe(422);
  });

  // A white-space-only question was a 500, and so was a NUL; both are the question's 422 now, before any stream.
  it.each([
    { what: 'a white-space-only question', body: { question: ' \n\t ' }, loc: ['body', 'question'], type: 'too_small' },
    { what: 'a NUL in the question', body: { question: 'tides\u0000' }, loc: ['body', 'question'], type: 'invalid_format' },
    { what: 'an escape in the question', body: { question: 'tides \u001b' }, loc: ['body', 'question'], type: 'invalid_format' },
    {
      what: 'a NUL in collection_id',
      body: { question: 'tides', collection_id: '\u0000' },
      loc: ['body', 'collection_id'],
      type: 'invalid_format',
    },
  ])('422 naming the field for $what, from search and from the stream', async ({ body, loc, type }) => {
    for (const path of ['/query/search', '/query/'] as const) {
      const response = await api('POST', path, { token: cast.owner.token, body: { collection_id: collectionId, ...body } });
      expect(response.status, path).toBe(422);
      expect(response.body.detail, path).toEqual([{ loc, msg: expect.any(String), type }]);
    }
  });

  it('422 for a NUL in the session_id of a question', async () => {
    const response = await api('POST', '/query/', {
      token: cast.owner.token,
      body: { question: 'tides', collection_id: collectionId, session_id: 'x\u0000' },
    });
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([{ loc: ['body', 'session_id'], msg: expect.any(String), type: 'invalid_format' }]);
  });

  it('takes a question over several lines, trimmed', async () => {
    const response = await search(cast.owner.token, {
      question: '  How does a tidal\n\tbarrage work?\r\n',
      collection_id: collectionId,
    });
    expect(response.status).toBe(200);
    expect(response.body.sources[0]?.source).toBe(articleUrl());
  });

  it('searches the caller’s personal namespace when collection_id is empty, and only theirs', async () => {
    const text = new TextEncoder().encode('Notes on sourdough: feed the starter twice a day with rye flour.\n');
    const job = await ingestFile(cast.memberIngest.token, 'bread.md', undefined, text);
    expect(job.status).toBe('succeeded');
    const mine = await search(cast.memberIngest.token, { question: 'sourdough starter rye', collection_id: '' });
    expect(mine.body.sources[0]).toMatchObject({ source: 'bread.md' });
    const theirs = await search(cast.stranger.token, { question: 'sourdough starter rye' });
    expect(theirs.status).toBe(200);
    expect(theirs.body.sources.some((s: { source: string }) => s.source === 'bread.md')).toBe(false);
  });
});
