import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { generatePdf } from '../../bench/ingest/pdf-generator.ts';
import { api, db, stack } from '../support/client.ts';
import { DOCS_DIR, fixture } from '../support/documents.ts';
import { type Cast, castWithCollection } from '../support/fixtures.ts';
import { chunkRows, documentOfJob, ingestFile, objectsUnder, upload, vectorIndex, waitForJob } from '../support/ingest.ts';
import { characterErrorRate } from '../support/ocr.ts';

let cast: Cast;
let collectionId: string;

beforeAll(async () => {
  ({ cast, collectionId } = await castWithCollection('Ingestion'));
});

describe('upload → job → documents → delete', () => {
  it('ingests a DOCX end to end and deletion leaves nothing behind', async () => {
    const job = await ingestFile(cast.owner.token, 'handbook-1p.docx', collectionId);
    expect(job.status).toBe('succeeded');
    expect(job.error_message).toBeNull();
    expect(job.chunks_total).toBeGreaterThan(0);
    expect(job.chunks_processed).toBe(job.chunks_total);
    expect(job.collection_id).toBe(collectionId);
    expect(job.source).toBe('handbook-1p.docx');
    // Progress never goes backwards.
    const processed = job.seen.map((s) => s.chunks_processed);
    expect(processed).toEqual([...processed].sort((a, b) => a - b));

    const documentId = (await documentOfJob(job.job_id)) as string;
    const chunks = await chunkRows(documentId);
    expect(chunks).toHaveLength(job.chunks_total);
    expect(chunks.every((c) => c.state === 'done')).toBe(true);

    const listed = await api('GET', `/collections/${collectionId}/documents`, { token: cast.memberQuery.token });
    expect(listed.status).toBe(200);
    const doc = listed.body.find((d) => d.id === documentId);
    expect(doc).toMatchObject({
      name: 'handbook-1p.docx',
      source_kind: 'upload',
      content_type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      size_bytes: fixture('handbook-1p.docx').byteLength,
      chunk_count: job.chunks_total,
    });
    // The signed link serves the original bytes, without any key.
    const original = await fetch(doc?.open_url as string);
    expect(original.status).toBe(200);
    expect(new Uint8Array(await original.arrayBuffer())).toEqual(fixture('handbook-1p.docx'));

    const index = vectorIndex().namespace(collectionId);
    const ids = chunks.map((c) => c.vector_id);
    const vectors = await index.fetch(ids, { includeMetadata: true });
    expect(vectors.every((v) => v !== null)).toBe(true);
    expect(vectors[0]?.metadata).toMatchObject({
      document_id: documentId,
      source: 'handbook-1p.docx',
      chunk_index: 0,
      chunk_type: 'text',
    });

    // Only the owner deletes.
    for (const user of [cast.memberIngest, cast.memberQuery, cast.stranger, cast.admin]) {
      const refused = await api('DELETE', `/collections/${collectionId}/documents/${documentId}`, { token: user.token });
      expect(refused.status).toBe(403);
    }
    const deleted = await api('DELETE', `/collections/${collectionId}/documents/${documentId}`, { token: cast.owner.token });
    expect(deleted).toMatchObject({ status: 200, body: { deleted: documentId } });

    expect((await index.fetch(ids)).every((v) => v === null)).toBe(true);
    expect(await objectsUnder(`${collectionId}/${documentId}`)).toEqual([]);
    expect(await chunkRows(documentId)).toEqual([]);
    expect((await fetch(doc?.open_url as string)).ok).toBe(false);
    const again = await api('DELETE', `/collections/${collectionId}/documents/${documentId}`, { token: cast.owner.token });
    expect(again.status).toBe(404);
  });

  it.each([
    ['stanley-cups.csv', 'Stanley Cups'],
    ['semicolon-delimited.csv', ''],
    ['vodafone-financials.xlsx', ''],
    ['sample-presentation-4slides.pptx', ''],
    ['paper-with-table.pdf', ''],
    ['multi-column-2p.pdf', ''],
  ])('ingests %s', async (name) => {
    const job = await ingestFile(cast.memberIngest.token, name, collectionId);
    expect(job.status, job.error_message ?? '').toMatch(/succeeded|partial/);
    const chunks = await chunkRows((await documentOfJob(job.job_id)) as string);
    expect(chunks.filter((c) => c.chunk_type === 'text').length).toBeGreaterThan(0);
    expect(chunks.every((c) => c.state !== 'pending')).toBe(true);
  });

  it('keeps page numbers of PDF chunks in their metadata', async () => {
    const job = await ingestFile(cast.owner.token, 'multi-column-2p.pdf', collectionId);
    const chunks = await chunkRows((await documentOfJob(job.job_id)) as string);
    const pages = new Set(chunks.flatMap((c) => (c.metadata.page ? [c.metadata.page] : (c.metadata.pages ?? []))));
    expect([...pages].sort()).toEqual([1, 2]);
  });

  it('reads a long PDF a page range per step, with contiguous chunks covering every page', async () => {
    // Three page ranges; a few lines a page keeps the chunk count, and so the embedding time, small.
    const pdf = generatePdf({ pages: 230, seed: 7, chartEvery: 0, photoEvery: 0, linesPerColumn: 6 });
    const job = await ingestFile(cast.owner.token, 'long-report.pdf', collectionId, pdf.bytes);
    expect(job.status, job.error_message ?? '').toBe('succeeded');
    const chunks = await chunkRows((await documentOfJob(job.job_id)) as string);
    expect(chunks.map((c) => c.chunk_index)).toEqual(chunks.map((_, i) => i));
    expect(chunks.length).toBe(job.chunks_total);
    const pages = new Set<number>();
    for (const c of chunks) {
      if (c.metadata.page) pages.add(c.metadata.page);
      if (c.metadata.pages) for (let p = c.metadata.pages[0]; p <= c.metadata.pages[1]; p++) pages.add(p);
    }
    expect(pages.size).toBe(230);
    // The ranges meet without losing text: the last words of page 100 and the first of page 101 are there.
    const text = chunks.map((c) => c.text).join(' ');
    expect(text).toContain(pdf.pageWords[99]?.slice(-3).join(' '));
    expect(text).toContain(pdf.pageWords[100]?.slice(0, 3).join(' '));
  }, 90_000);

  it('uses the collection chunk_size for documents ingested after a change', async () => {
    const admin = cast.admin;
    const { body: created } = await api('POST', '/collections/', { token: admin.token, body: { name: 'Small chunks' } });
    const put = await api('PUT', `/collections/${created.id}/config`, {
      token: admin.token,
      body: { chunk_size: 200, retrieval_strategy: 'similarity' },
    });
    expect(put.status).toBe(200);
    const small = await ingestFile(admin.token, 'handbook-1p.docx', created.id);
    const large = await ingestFile(cast.owner.token, 'handbook-1p.docx', collectionId);
    expect(small.chunks_total).toBeGreaterThan(large.chunks_total);
    const chunks = await chunkRows((await documentOfJob(small.job_id)) as string);
    expect(Math.max(...chunks.map((c) => (c.text ?? '').length))).toBeLessThanOrEqual(200);
  });

  it('describes figures and scanned pages as image_description chunks with stored PNGs', async () => {
    const job = await ingestFile(cast.owner.token, 'scan-linn-2col.pdf', collectionId);
    expect(job.status, job.error_message ?? '').toBe('succeeded');
    const documentId = (await documentOfJob(job.job_id)) as string;
    const chunks = await chunkRows(documentId);
    const images = chunks.filter((c) => c.chunk_type === 'image_description');
    expect(images.length).toBeGreaterThan(0);
    expect(images[0]?.metadata).toMatchObject({ origin: 'scanned_page', page: 1 });
    // Real OCR through the whole pipeline: PDF image → PNG in Storage → vision model → chunk.
    const truth = readFileSync(`${DOCS_DIR}scan-linn-2col.groundtruth.txt`, 'utf8');
    const cer = characterErrorRate(images.map((c) => c.text).join('\n'), truth);
    console.log(`ingest pipeline OCR of scan-linn-2col.pdf: CER ${cer.toFixed(4)}`);
    expect(cer).toBeLessThan(0.05);
    const stored = await objectsUnder(`${collectionId}/${documentId}/images`);
    expect(stored.length).toBe(images.length);
    const vectors = await vectorIndex()
      .namespace(collectionId)
      .fetch(
        images.map((c) => c.vector_id),
        { includeMetadata: true },
      );
    expect(vectors[0]?.metadata).toMatchObject({ chunk_type: 'image_description', image_path: images[0]?.image_path });
  });
});

describe('documents that cannot be ingested', () => {
  it.each([
    ['password-protected.pdf', /encrypted|password/i],
    ['corrupt-header-only.pdf', /corrupt|could not be read|damaged/i],
    ['password-protected.xlsx', /password/i],
  ])('%s fails with a plain reason and leaves no document behind', async (name, reason) => {
    const job = await ingestFile(cast.owner.token, name, collectionId);
    expect(job.status).toBe('failed');
    expect(job.error_message).toMatch(reason);
    expect(await documentOfJob(job.job_id)).toBeNull();
    const listed = await api('GET', `/collections/${collectionId}/documents`, { token: cast.owner.token });
    expect(listed.body.some((d) => d.name === name)).toBe(false);
  });

  it('a 0-byte file is refused or fails as empty', async () => {
    const created = await upload(cast.owner.token, 'empty.txt', new Uint8Array(), collectionId);
    if (created.status === 200) {
      const job = await waitForJob(cast.owner.token, created.body.job_id);
      expect(job.status).toBe('failed');
      expect(job.error_message).toMatch(/empty/i);
    } else {
      expect(created.status).toBe(415);
    }
  });

  it.each([
    { name: 'report.docx', bytes: fixture('paper-with-table.pdf'), what: 'PDF bytes named .docx' },
    { name: 'sheet.xlsx', bytes: fixture('handbook-1p.docx'), what: 'a DOCX named .xlsx' },
    {
      name: 'notes.txt',
      bytes: new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, 0, 0, 0, 0, 0xff, 0xfe, 0, 0]),
      what: 'binary named .txt',
    },
    { name: 'program.exe', bytes: new Uint8Array([0x4d, 0x5a, 0x90, 0]), what: 'an executable' },
    { name: 'image.png', bytes: new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]), what: 'JPEG bytes named .png' },
    { name: 'image.gif', bytes: new Uint8Array([0x47, 0x49, 0x46, 0x38, 0x39, 0x61]), what: 'a GIF' },
    { name: 'noextension', bytes: 'hello', what: 'no extension' },
  ])('415 for $what', async ({ name, bytes }) => {
    const response = await upload(cast.owner.token, name, bytes, collectionId);
    expect(response.status).toBe(415);
    expect(response.body.code).toBe('unsupported_media_type');
  });

  it('413 for more than 50 MB, counted while streaming', async () => {
    const big = new Uint8Array(50 * 1024 * 1024 + 1).fill(0x61);
    const response = await upload(cast.owner.token, 'big.txt', big, collectionId);
    expect(response.status).toBe(413);
    const [{ count } = { count: -1 }] = await db()<
      { count: number }[]
    >`select count(*)::int as count from documents where collection_id = ${collectionId} and name = 'big.txt'`;
    expect(count).toBe(0);
  });

  it('422 when the form has no file field', async () => {
    const form = new FormData();
    form.append('other', 'x');
    const response = await api('POST', `/ingest/?collection_id=${collectionId}`, { token: cast.owner.token, body: form });
    expect(response.status).toBe(422);
  });
});

describe('who may ingest and see jobs', () => {
  it('owner and ingest members may upload; others are refused; unknown collections are 404', async () => {
    const bytes = 'Access rules for ingestion.\n';
    expect((await upload(cast.owner.token, 'a.txt', bytes, collectionId)).status).toBe(200);
    // Other bytes: the same ones, while the owner's job still reads them, would be 409 (jobs.test.ts).
    expect((await upload(cast.memberIngest.token, 'b.txt', `${bytes}And the member's own.\n`, collectionId)).status).toBe(200);
    for (const user of [cast.memberQuery, cast.stranger, cast.admin]) {
      const refused = await upload(user.token, 'a.txt', bytes, collectionId);
      expect(refused.status).toBe(403);
    }
    expect((await upload(cast.owner.token, 'a.txt', bytes, crypto.randomUUID())).status).toBe(404);
    expect((await upload(cast.owner.token, 'a.txt', bytes, 'not-a-uuid')).status).toBe(404);
    expect((await upload('not-a-token', 'a.txt', bytes, collectionId)).status).toBe(401);

    for (const user of [cast.memberQuery, cast.stranger, cast.admin]) {
      const refused = await api('POST', '/ingest/url', {
        token: user.token,
        body: { url: `${stack.pagesUrl}/article.html`, collection_id: collectionId },
      });
      expect(refused.status).toBe(403);
    }
  });

  it('a job is visible to its creator only', async () => {
    const created = await upload(cast.memberIngest.token, 'mine.txt', 'Mine alone.\n', collectionId);
    const jobId = created.body.job_id;
    expect((await api('GET', `/ingest/jobs/${jobId}`, { token: cast.memberIngest.token })).status).toBe(200);
    for (const user of [cast.owner, cast.memberQuery, cast.stranger, cast.admin]) {
      expect((await api('GET', `/ingest/jobs/${jobId}`, { token: user.token })).status).toBe(404);
    }
    expect((await api('GET', `/ingest/jobs/${crypto.randomUUID()}`, { token: cast.owner.token })).status).toBe(404);
    expect((await api('GET', '/ingest/jobs/nope', { token: cast.owner.token })).status).toBe(404);
    expect((await api('GET', `/ingest/jobs/${jobId}`, {})).status).toBe(401);
  });

  it('without collection_id the document goes to the personal namespace', async () => {
    const text = 'Personal notes about the quarterly gardening plan and tomato seedlings.\n';
    const job = await ingestFile(cast.stranger.token, 'personal.md', undefined, text);
    expect(job).toMatchObject({ status: 'succeeded', collection_id: null });
    const chunks = await chunkRows((await documentOfJob(job.job_id)) as string);
    const found = await vectorIndex()
      .namespace(`personal-${cast.stranger.id}`)
      .fetch(
        chunks.map((c) => c.vector_id),
        { includeMetadata: true },
      );
    expect(found[0]?.metadata?.text).toContain('tomato seedlings');

    // Only its owner lists and deletes it.
    const documentId = (await documentOfJob(job.job_id)) as string;
    const mine = await api('GET', '/ingest/documents', { token: cast.stranger.token });
    expect(mine.body.map((d) => d.id)).toContain(documentId);
    const theirs = await api('GET', '/ingest/documents', { token: cast.owner.token });
    expect(theirs.body.map((d) => d.id)).not.toContain(documentId);
    expect((await api('DELETE', `/ingest/documents/${documentId}`, { token: cast.owner.token })).status).toBe(404);
    expect((await api('DELETE', `/ingest/documents/${documentId}`, { token: cast.stranger.token })).body).toEqual({
      deleted: documentId,
    });
    const gone = await vectorIndex()
      .namespace(`personal-${cast.stranger.id}`)
      .fetch(chunks.map((c) => c.vector_id));
    expect(gone.every((v) => v === null)).toBe(true);
    expect(await objectsUnder(`personal-${cast.stranger.id}/${documentId}`)).toEqual([]);
  });
});

describe('URL ingestion', () => {
  it('reduces an HTML page to its main text, and lists the URL as open_url', async () => {
    const url = `${stack.pagesUrl}/article.html`;
    const created = await api('POST', '/ingest/url', { token: cast.owner.token, body: { url, collection_id: collectionId } });
    expect(created.status).toBe(200);
    const job = await waitForJob(cast.owner.token, created.body.job_id);
    expect(job.status, job.error_message ?? '').toBe('succeeded');
    expect(job.source).toBe(url);
    const documentId = (await documentOfJob(job.job_id)) as string;
    const text = (await chunkRows(documentId)).map((c) => c.text).join('\n');
    expect(text).toContain('La Rance station');
    expect(text).not.toContain('Cookie settings');
    const listed = await api('GET', `/collections/${collectionId}/documents`, { token: cast.owner.token });
    expect(listed.body.find((d) => d.id === documentId)).toMatchObject({
      open_url: url,
      source_kind: 'url',
      content_type: 'text/html',
    });
  });

  it('parses a URL that serves a PDF as a PDF', async () => {
    const url = `${stack.pagesUrl}/docs/paper-with-table.pdf`;
    const created = await api('POST', '/ingest/url', { token: cast.owner.token, body: { url, collection_id: collectionId } });
    const job = await waitForJob(cast.owner.token, created.body.job_id);
    expect(job.status, job.error_message ?? '').toMatch(/succeeded|partial/);
    const [doc] = await db()`select content_type from documents where id = ${await documentOfJob(job.job_id)}`;
    expect(doc?.content_type).toBe('application/pdf');
  });

  it.each([
    [
      'a redirect to the cloud metadata address',
      (base: string) => `${base}/redirect?to=${encodeURIComponent('http://169.254.169.254/latest/meta-data/')}`,
      /private|reserved|not allowed/i,
    ],
    [
      'a redirect to a name that resolves privately',
      (base: string) => `${base}/redirect?to=${encodeURIComponent('http://rebind.example.test/')}`,
      /private|reserved|not allowed/i,
    ],
    ['a 404', (base: string) => `${base}/status/404`, /404/],
    ['an unsupported type', (base: string) => `${base}/binary`, /cannot be ingested|not supported|unsupported/i],
  ])('fails the job at fetch time for %s', async (_name, build, reason) => {
    const created = await api('POST', '/ingest/url', {
      token: cast.owner.token,
      body: { url: build(stack.pagesUrl), collection_id: collectionId },
    });
    expect(created.status).toBe(200);
    const job = await waitForJob(cast.owner.token, created.body.job_id);
    expect(job.status).toBe('failed');
    expect(job.error_message).toMatch(reason);
    expect(await documentOfJob(job.job_id)).toBeNull();
  });

  // Refused at request time with 422, before any job exists.
  const refused = [
    'ftp://example.com/file.pdf',
    'file:///etc/passwd',
    'gopher://example.com/',
    'javascript:alert(1)',
    'http://user:secret@example.com/',
    'http://example.com:8080/',
    'https://example.com:8443/',
    'http://localhost/',
    'http://localhost./',
    'http://app.localhost/',
    'http://127.0.0.1/',
    'http://127.1/',
    'http://2130706433/',
    'http://0x7f000001/',
    'http://0177.0.0.1/',
    'http://0.0.0.0/',
    'http://10.0.0.1/',
    'http://172.16.5.4/',
    'http://192.168.1.1/',
    'http://169.254.169.254/latest/meta-data/',
    'http://100.64.0.1/',
    'http://224.0.0.1/',
    'http://240.0.0.1/',
    'http://[::1]/',
    'http://[fd00::1]/',
    'http://[fe80::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:169.254.169.254]/',
    'http://printer.local/',
    'http://metadata.google.internal/',
    'http://intranet/',
    'http://rebind.example.test/',
    'http://mixed.example.test/',
    'http://metadata.example.test/',
    'http://ula.example.test/',
    'http://alias-rebind.example.test/',
    'http://does-not-exist.example.test/',
    `${'http://127.0.0.1:1'}/not-trusted`,
    'not a url',
  ];
  it.each(refused)('422 for %s', async (url) => {
    const response = await api('POST', '/ingest/url', { token: cast.owner.token, body: { url, collection_id: collectionId } });
    expect(response.status, JSON.stringify(response.body)).toBe(422);
    expect(JSON.stringify(response.body.detail)).not.toMatch(/stack|Error:/);
  });

  it('accepts a public host (and its job fails cleanly when the host cannot be reached)', async () => {
    const created = await api('POST', '/ingest/url', {
      token: cast.owner.token,
      body: { url: 'https://public.example.test/page', collection_id: collectionId },
    });
    expect(created.status).toBe(200);
  });
});

describe('collection deletion', () => {
  it('purges the namespace and every stored object', async () => {
    const { body: created } = await api('POST', '/collections/', { token: cast.owner.token, body: { name: 'Doomed' } });
    const job = await ingestFile(cast.owner.token, 'stanley-cups.csv', created.id);
    expect(job.status).toBe('succeeded');
    const documentId = (await documentOfJob(job.job_id)) as string;
    const ids = (await chunkRows(documentId)).map((c) => c.vector_id);
    expect(await objectsUnder(created.id)).not.toEqual([]);

    const deleted = await api('DELETE', `/collections/${created.id}`, { token: cast.owner.token });
    expect(deleted.status).toBe(200);
    expect(await objectsUnder(created.id)).toEqual([]);
    expect(await vectorIndex().listNamespaces()).not.toContain(created.id);
    expect((await vectorIndex().namespace(created.id).fetch(ids)).every((v) => v === null)).toBe(true);
    const [{ count } = { count: -1 }] = await db()<
      { count: number }[]
    >`select count(*)::int as count from documents where id = ${documentId}`;
    expect(count).toBe(0);
  });
});
