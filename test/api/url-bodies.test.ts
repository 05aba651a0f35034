import { beforeAll, describe, expect, it } from 'vitest';
import { api, db, stack } from '../support/client.ts';
import { fixture } from '../support/documents.ts';
import { type Cast, castWithCollection } from '../support/fixtures.ts';
import { chunkRows, documentOfJob, storage, waitForJob } from '../support/ingest.ts';

/**
 * A fetched page is read into one buffer that grows as it arrives, and stored by streaming views
 * of it (workers/ingest/src/guarded-fetch.ts, workers/ingest/src/pipeline/source.ts): in the real
 * worker, whatever way the page came, it is stored byte for byte and read. How much memory that
 * takes is test/unit/hostile-files.test.ts's.
 */

let cast: Cast;
let collectionId: string;

beforeAll(async () => {
  ({ cast, collectionId } = await castWithCollection('URL bodies'));
});

describe('a page fetched for ingestion', () => {
  it.each([
    ['with its length declared', 'docs'],
    ['without a length, in chunks', 'chunked'],
    ['gzip-compressed', 'gzip'],
  ])('%s is stored byte for byte and read', async (_what, route) => {
    const url = `${stack.pagesUrl}/${route}/paper-with-table.pdf`;
    const created = await api('POST', '/ingest/url', { token: cast.owner.token, body: { url, collection_id: collectionId } });
    expect(created.status).toBe(200);
    const job = await waitForJob(cast.owner.token, created.body.job_id);
    expect(job.status, job.error_message ?? '').toMatch(/succeeded|partial/);
    const documentId = (await documentOfJob(job.job_id)) as string;
    const [doc] = await db()`select storage_path, size_bytes from documents where id = ${documentId}`;
    const original = fixture('paper-with-table.pdf');
    expect(Number(doc?.size_bytes)).toBe(original.byteLength);
    const { data, error } = await storage().download(doc?.storage_path as string);
    expect(error).toBeNull();
    expect(Buffer.from(await (data as Blob).arrayBuffer()).equals(Buffer.from(original))).toBe(true);
    expect((await chunkRows(documentId)).length).toBeGreaterThan(0);
  });
});
