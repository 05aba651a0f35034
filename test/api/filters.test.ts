import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_METADATA_KEYS } from '#core/limits.ts';
import { namespaceFor } from '#core/namespaces.ts';
import { api, db, fileForm, problems, stack } from '../support/client.ts';
import { type Cast, castUsers, sharedCollection } from '../support/fixtures.ts';
import { vectorIndex, waitForJob } from '../support/ingest.ts';
import { askQuestion } from '../support/sse.ts';

/** Metadata, filters and PATCH (issue 22), through the real workers, devstack vector index and database. */

let cast: Cast;
let collectionId: string;
let ownerId: string;
const ids: Record<string, string> = {};

/** A hostile value, stored as metadata: a filter for it must match it and nothing else. */
const HOSTILE = `Acme' OR metadata.company != 'x\\' "quoted" ) OR (1 = 1 ünï 🙂`;

/** POST /ingest/ with a `metadata` form field before the file, as a browser's FormData in that order sends it. */
function uploadWith(name: string, text: string, metadata: unknown, collection = collectionId) {
  return api('POST', `/ingest/?collection_id=${collection}`, { token: cast.owner.token, body: fileForm(name, text, metadata) });
}

const report = (company: string, year: number, extra = '') =>
  `# ${company} annual report ${year}\n\nThe gross margin of the widget division was reported in the quarterly ledger. ${extra}\n`;

beforeAll(async () => {
  cast = await castUsers();
  ({ collectionId } = await sharedCollection(cast, 'Filters'));
  const collection = await api('GET', '/collections/', { token: cast.owner.token });
  ownerId = collection.body.find((c) => c.id === collectionId)?.user_id as string;
  const uploads = [
    ['acme-2024.md', report('Acme', 2024), { company: 'Acme', year: 2024, audited: true, tags: ['annual', 'q4'] }],
    ['acme-2025.md', report('Acme', 2025), { company: 'Acme', year: 2025, audited: false, tags: ['annual'] }],
    ['globex-2025.txt', report('Globex', 2025), { company: 'Globex', year: 2025 }],
    ['hostile.md', report('Hostile', 2023), { company: HOSTILE, year: 2023 }],
    ['plain.md', report('Plain', 2020), undefined],
  ] as const;
  for (const [name, text, metadata] of uploads) {
    const created = await uploadWith(name, text, metadata);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    ids[name] = created.body.document_id;
    expect((await waitForJob(cast.owner.token, created.body.job_id)).status).toBe('succeeded');
  }
  const page = await api('POST', '/ingest/url', {
    token: cast.owner.token,
    body: { url: `${stack.pagesUrl}/article.html`, collection_id: collectionId, metadata: { company: 'Web', year: 2025 } },
  });
  expect(page.status, JSON.stringify(page.body)).toBe(200);
  ids.web = page.body.document_id;
  expect((await waitForJob(cast.owner.token, page.body.job_id)).status).toBe('succeeded');
}, 180_000);

const QUESTION = 'gross margin of the widget division in the quarterly ledger';

async function searched(filter: unknown, token = cast.owner.token) {
  const response = await api('POST', '/query/search', {
    token,
    body: { question: QUESTION, collection_id: collectionId, top_k: 20, filter },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return new Set(response.body.sources.map((s) => s.document_id));
}

const docs = (...names: string[]) => new Set(names.map((name) => ids[name]));

describe('metadata on ingestion', () => {
  it('is stored on the document and listed with its type', async () => {
    const listed = await api('GET', `/collections/${collectionId}/documents`, { token: cast.memberQuery.token });
    const acme = listed.body.find((d: { id: string }) => d.id === ids['acme-2024.md']);
    expect(acme).toMatchObject({
      type: 'md',
      metadata: { company: 'Acme', year: 2024, audited: true, tags: ['annual', 'q4'] },
    });
    expect(listed.body.find((d) => d.id === ids['plain.md'])?.metadata).toEqual({});
    expect(listed.body.find((d: { id: string }) => d.id === ids.web)).toMatchObject({
      type: 'html',
      metadata: { company: 'Web' },
    });
  });

  it('travels with every vector of the document', async () => {
    const namespace = namespaceFor(collectionId, ownerId);
    const rows = await db()<{ vector_id: string }[]>`
      select vector_id from document_chunks where document_id = ${ids['acme-2024.md'] as string}`;
    expect(rows.length).toBeGreaterThan(0);
    const vectors = await vectorIndex()
      .namespace(namespace)
      .fetch(
        rows.map((r) => r.vector_id),
        { includeMetadata: true },
      );
    for (const vector of vectors) {
      expect(vector?.metadata).toMatchObject({
        document_id: ids['acme-2024.md'],
        doc_type: 'md',
        uploaded_at: expect.any(Number),
        metadata: { company: 'Acme', year: 2024, audited: true, tags: ['annual', 'q4'] },
      });
    }
  });

  it('refuses metadata past its limits with 422, storing nothing', async () => {
    const before = await api('GET', `/collections/${collectionId}/documents`, { token: cast.owner.token });
    const tooMany = Object.fromEntries(Array.from({ length: MAX_METADATA_KEYS + 1 }, (_, i) => [`k${i}`, i]));
    const refused = [
      tooMany,
      { nested: { deeper: 1 } },
      { list: [1, 2] },
      { list: Array.from({ length: 33 }, () => 'x') },
      { long: 'x'.repeat(513) },
      { 'bad key': 1 },
      { "a' OR 'b": 1 },
      { '1st': 1 },
      { nothing: null },
      { big: Array.from({ length: 30 }, () => 'x'.repeat(500)) },
      { control: 'a\u0000b' },
      [1, 2],
      'not json',
    ];
    for (const metadata of refused) {
      const upload = await uploadWith('refused.md', report('Refused', 1999, JSON.stringify(metadata).slice(0, 40)), metadata);
      expect(upload.status, JSON.stringify(metadata).slice(0, 80)).toBe(422);
      expect(upload.body.code).toBe('validation_failed');
      expect(problems(upload)[0]?.loc).toEqual(['body', 'metadata']);
      if (typeof metadata === 'string' || Array.isArray(metadata)) continue;
      const byUrl = await api('POST', '/ingest/url', {
        token: cast.owner.token,
        body: { url: `${stack.pagesUrl}/article.html`, collection_id: collectionId, metadata },
      });
      expect(byUrl.status, JSON.stringify(metadata).slice(0, 80)).toBe(422);
      expect(problems(byUrl)[0]?.loc.slice(0, 2)).toEqual(['body', 'metadata']);
    }
    const after = await api('GET', `/collections/${collectionId}/documents`, { token: cast.owner.token });
    expect(after.body.map((d: { id: string }) => d.id)).toEqual(before.body.map((d: { id: string }) => d.id));
  });
});

describe('filter on POST /query/search', () => {
  it('selects by metadata: equality, in, ranges, contains, and, or, not', async () => {
    expect(await searched(undefined)).toEqual(
      docs('acme-2024.md', 'acme-2025.md', 'globex-2025.txt', 'hostile.md', 'plain.md', 'web'),
    );
    expect(await searched({ 'metadata.company': 'Acme' })).toEqual(docs('acme-2024.md', 'acme-2025.md'));
    expect(await searched({ 'metadata.company': { in: ['Globex', 'Web'] } })).toEqual(docs('globex-2025.txt', 'web'));
    expect(await searched({ 'metadata.year': { gte: 2024, lt: 2025 } })).toEqual(docs('acme-2024.md'));
    expect(await searched({ 'metadata.tags': { contains: 'q4' } })).toEqual(docs('acme-2024.md'));
    expect(await searched({ 'metadata.audited': false })).toEqual(docs('acme-2025.md'));
    expect(await searched({ and: [{ 'metadata.company': 'Acme' }, { 'metadata.year': 2025 }] })).toEqual(docs('acme-2025.md'));
    expect(await searched({ or: [{ 'metadata.year': 2023 }, { 'metadata.company': 'Globex' }] })).toEqual(
      docs('hostile.md', 'globex-2025.txt'),
    );
    // Negation includes documents without the field.
    expect(await searched({ not: { 'metadata.company': 'Acme' } })).toEqual(
      docs('globex-2025.txt', 'hostile.md', 'plain.md', 'web'),
    );
    expect(await searched({ 'metadata.year': { ne: 2025 } })).toEqual(docs('acme-2024.md', 'hostile.md', 'plain.md'));
  });

  it('selects by the built-in fields: document_id, type, source and upload date', async () => {
    expect(await searched({ document_id: ids['globex-2025.txt'] })).toEqual(docs('globex-2025.txt'));
    expect(await searched({ document_id: { in: [ids['plain.md'], ids.web] } })).toEqual(docs('plain.md', 'web'));
    expect(await searched({ type: 'txt' })).toEqual(docs('globex-2025.txt'));
    expect(await searched({ type: { nin: ['md'] } })).toEqual(docs('globex-2025.txt', 'web'));
    expect(await searched({ source: 'plain.md' })).toEqual(docs('plain.md'));
    expect(await searched({ source: `${stack.pagesUrl}/article.html` })).toEqual(docs('web'));
    expect((await searched({ uploaded_at: { gte: '2000-01-01' } })).size).toBe(6);
    expect(await searched({ uploaded_at: { gt: new Date(Date.now() + 3_600_000).toISOString() } })).toEqual(new Set());
  });

  it('matches a hostile value exactly, and user text never becomes filter syntax', async () => {
    expect(await searched({ 'metadata.company': HOSTILE })).toEqual(docs('hostile.md'));
    const attempts = [
      "Acme' OR '1'='1",
      'Acme" OR "1"="1',
      "x' OR HAS FIELD document_id OR 'x",
      "\\' OR 1=1 --",
      'Acme\\',
      ") OR (metadata.company = 'Acme'",
      `${HOSTILE}x`,
      'Ac\u202eme',
      'A'.repeat(512),
    ];
    for (const value of attempts) {
      expect(await searched({ 'metadata.company': value }), value).toEqual(new Set());
      expect(await searched({ source: value }), value).toEqual(new Set());
    }
  });

  it('refuses bad fields, operators, values and filters past the limits with 422 naming where', async () => {
    const refused: [unknown, (string | number)[]][] = [
      [{ "metadata.company' OR 'a": 'Acme' }, ['filter', "metadata.company' OR 'a"]],
      [{ 'metadata.company = 1 OR x': 'Acme' }, ['filter', 'metadata.company = 1 OR x']],
      [{ text: 'secret' }, ['filter', 'text']],
      [{ 'metadata.a.b': 1 }, ['filter', 'metadata.a.b']],
      [{ 'metadata.year': { like: 2 } }, ['filter', 'metadata.year', 'like']],
      [{ 'metadata.year': { gt: '2024' } }, ['filter', 'metadata.year', 'gt']],
      [{ document_id: "' OR 1=1" }, ['filter', 'document_id']],
      [{ or: [{ 'metadata.a': 1 }, { 'metadata.b': { in: [] } }] }, ['filter', 'or', 1, 'metadata.b', 'in']],
      [{ 'metadata.a': 'a\nb' }, ['filter', 'metadata.a']],
      [{}, ['filter']],
      [{ or: Array.from({ length: 65 }, (_, i) => ({ 'metadata.a': i })) }, ['filter', 'or', 64, 'metadata.a']],
      [{ 'metadata.a': { in: Array.from({ length: 101 }, (_, i) => i) } }, ['filter', 'metadata.a', 'in']],
    ];
    let deep: unknown = { 'metadata.a': 1 };
    for (let i = 0; i < 9; i++) deep = { not: deep };
    refused.push([deep, ['filter', ...Array.from({ length: 8 }, () => 'not')]]);
    for (const [filter, loc] of refused) {
      const response = await api('POST', '/query/search', {
        token: cast.owner.token,
        body: { question: QUESTION, collection_id: collectionId, filter },
      });
      expect(response.status, JSON.stringify(filter).slice(0, 100)).toBe(422);
      expect(problems(response)[0]?.loc).toEqual(['body', ...loc]);
      expect(JSON.stringify(response.body)).not.toMatch(/stack|at Object|Upstash/i);
    }
    // Nesting far past the limit (sent as text: JSON.stringify itself gives up on it) is refused.
    const depth = 5000;
    const veryDeep = `${'{"and":['.repeat(depth)}{"metadata.a":1}${']}'.repeat(depth)}`;
    const response = await api('POST', '/query/search', {
      token: cast.owner.token,
      body: `{"question":"${QUESTION}","collection_id":"${collectionId}","filter":${veryDeep}}`,
      headers: { 'Content-Type': 'application/json' },
    });
    expect(response.status).toBe(422);
  });
});

describe('filter on POST /query/', () => {
  it('limits the sources the answer may cite', async () => {
    const asked = await askQuestion(cast.memberQuery.token, {
      question: QUESTION,
      collection_id: collectionId,
      top_k: 10,
      filter: { 'metadata.company': 'Globex' },
    });
    expect(asked.status).toBe(200);
    const metadata = asked.events.find((e) => e.event === 'metadata');
    const sources = metadata?.data.sources as { document_id: string }[];
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) expect(source.document_id).toBe(ids['globex-2025.txt']);
  });

  it('refuses a bad filter with 422 before the stream starts', async () => {
    const asked = await askQuestion(cast.owner.token, {
      question: QUESTION,
      collection_id: collectionId,
      filter: { 'metadata.x': { gt: 'y' } },
    });
    expect(asked.status).toBe(422);
    expect(problems({ body: asked.json ?? {} })[0]?.loc).toEqual(['body', 'filter', 'metadata.x', 'gt']);
  });
});

describe('the documents list by filter', () => {
  const listed = async (filter: unknown, extra = '') => {
    const response = await api(
      'GET',
      `/collections/${collectionId}/documents?filter=${encodeURIComponent(JSON.stringify(filter))}${extra}`,
      { token: cast.memberQuery.token },
    );
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body.map((d: { id: string }) => d.id) as string[];
  };

  it('selects what the same filter searches', async () => {
    for (const filter of [
      { 'metadata.company': 'Acme' },
      { not: { 'metadata.company': 'Acme' } },
      { type: 'txt' },
      { 'metadata.company': HOSTILE },
      { or: [{ 'metadata.tags': { contains: 'annual' } }, { source: 'plain.md' }] },
    ]) {
      expect(new Set(await listed(filter)), JSON.stringify(filter)).toEqual(await searched(filter));
    }
    expect(await listed({ 'metadata.company': 'Acme' }, '&limit=1&offset=1')).toHaveLength(1);
  });

  it('refuses a bad filter with 422', async () => {
    for (const filter of ['not json', '{"metadata.a b": 1}', '[]']) {
      const response = await api('GET', `/collections/${collectionId}/documents?filter=${encodeURIComponent(filter)}`, {
        token: cast.owner.token,
      });
      expect(response.status, filter).toBe(422);
      expect(problems(response)[0]?.loc.slice(0, 2)).toEqual(['query', 'filter']);
    }
  });
});

describe('PATCH a document’s metadata', () => {
  const patch = (token: string, documentId: string, body: unknown) =>
    api('PATCH', `/collections/${collectionId}/documents/${documentId}`, { token, body });

  it('replaces it, and searches follow at once', async () => {
    const id = ids['plain.md'] as string;
    const updated = await patch(cast.owner.token, id, { metadata: { company: 'Initech', year: 2019 } });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body).toMatchObject({ id, metadata: { company: 'Initech', year: 2019 } });
    expect(await searched({ 'metadata.company': 'Initech' })).toEqual(docs('plain.md'));

    const cleared = await patch(cast.owner.token, id, { metadata: {} });
    expect(cleared.body.metadata).toEqual({});
    expect(await searched({ 'metadata.company': 'Initech' })).toEqual(new Set());
    expect(await searched({ source: 'plain.md' })).toEqual(docs('plain.md'));
  });

  it('is the owner’s only (403 to members and strangers), refuses bad metadata, and is 404 for an unknown document', async () => {
    const id = ids['acme-2024.md'] as string;
    expect((await patch(cast.memberIngest.token, id, { metadata: { company: 'Evil' } })).status).toBe(403);
    expect((await patch(cast.stranger.token, id, { metadata: { company: 'Evil' } })).status).toBe(403);
    expect((await patch(cast.owner.token, '00000000-0000-4000-8000-000000000000', { metadata: {} })).status).toBe(404);
    const bad = await patch(cast.owner.token, id, { metadata: { 'no good': 1 } });
    expect(bad.status).toBe(422);
    expect(problems(bad)[0]?.loc).toEqual(['body', 'metadata', 'no good']);
    expect((await patch(cast.owner.token, id, { metadata: { a: 1 }, other: 1 })).status).toBe(422);
    expect(await searched({ 'metadata.company': 'Evil' })).toEqual(new Set());
  });

  it('works on personal documents, whose list filters too', async () => {
    const { body: created } = await api('POST', '/ingest/', {
      token: cast.owner.token,
      body: fileForm('mine.md', report('Personal', 2022), { project: 'apollo' }),
    });
    expect((await waitForJob(cast.owner.token, created.job_id)).status).toBe('succeeded');
    const filter = encodeURIComponent(JSON.stringify({ 'metadata.project': 'gemini' }));
    expect((await api('GET', `/ingest/documents?filter=${filter}`, { token: cast.owner.token })).body).toEqual([]);
    const updated = await api('PATCH', `/ingest/documents/${created.document_id}`, {
      token: cast.owner.token,
      body: { metadata: { project: 'gemini' } },
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    const mine = await api('GET', `/ingest/documents?filter=${filter}`, { token: cast.owner.token });
    expect(mine.body.map((d: { id: string }) => d.id)).toEqual([created.document_id]);
    const found = await api('POST', '/query/search', {
      token: cast.owner.token,
      body: { question: QUESTION, filter: { 'metadata.project': 'gemini' } },
    });
    expect(found.body.sources.map((s) => s.document_id)).toContain(created.document_id);
    expect(
      (await api('PATCH', `/ingest/documents/${created.document_id}`, { token: cast.stranger.token, body: { metadata: {} } }))
        .status,
    ).toBe(404);
  });
});

describe('metadata of a new version', () => {
  it('is kept from the old one when the new one is given none, and replaced when it is', async () => {
    const first = await uploadWith('versioned.md', report('Versioned', 2021), { company: 'Versioned', edition: 1 });
    expect((await waitForJob(cast.owner.token, first.body.job_id)).status).toBe('succeeded');
    const replace = async (text: string, metadata: unknown, replaces: string) => {
      const response = await api('POST', `/ingest/?collection_id=${collectionId}&replace_document_id=${replaces}`, {
        token: cast.owner.token,
        body: fileForm('versioned.md', text, metadata),
      });
      const { body } = response;
      expect(response.status, JSON.stringify(body)).toBe(200);
      expect((await waitForJob(cast.owner.token, body.job_id)).status).toBe('succeeded');
      return body.document_id;
    };
    const metadataOf = async (id: string) => {
      const listed = await api('GET', `/collections/${collectionId}/documents`, { token: cast.owner.token });
      return listed.body.find((d: { id: string }) => d.id === id)?.metadata;
    };
    const second = await replace(report('Versioned', 2022), undefined, first.body.document_id);
    expect(await metadataOf(second)).toEqual({ company: 'Versioned', edition: 1 });
    expect(await searched({ 'metadata.company': 'Versioned' })).toEqual(new Set([second]));
    const third = await replace(report('Versioned', 2023), { company: 'Versioned', edition: 3 }, second);
    expect(await metadataOf(third)).toEqual({ company: 'Versioned', edition: 3 });
    expect(await searched({ 'metadata.edition': 3 })).toEqual(new Set([third]));
  });
});
