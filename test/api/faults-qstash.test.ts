import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { api, db, skipRealPostgres, stack } from '../support/client.ts';
import { evaluation, eventually, expectServiceError, faultCounts, residue, sleep } from '../support/faults.ts';
import { type Cast, castWithCollection } from '../support/fixtures.ts';
import { chunkRows, clearFaults, documentOfJob, ingestFile, injectFault, upload, vectorIndex } from '../support/ingest.ts';
import { askQuestion } from '../support/sse.ts';

// The queue (QStash) down. The upload (503 before the body is read, nothing left) is in
// ingest-faults.test.ts.
let cast: Cast;
let collectionId: string;

beforeAll(async () => {
  if (skipRealPostgres) return;
  ({ cast, collectionId } = await castWithCollection('QStash faults'));
  const job = await ingestFile(cast.owner.token, 'rance.txt', collectionId, 'The Rance tidal power station opened in 1966.\n');
  expect(job.status).toBe('succeeded');
});
afterEach(() => clearFaults());

describe.skipIf(skipRealPostgres)('QStash down', () => {
  it('URL ingestion: 503, with no job or document left behind', async () => {
    const before = await residue(collectionId);
    await injectFault('qstash');
    const response = await api('POST', '/ingest/url', {
      token: cast.owner.token,
      body: { url: `${stack.pagesUrl}/article.html`, collection_id: collectionId },
    });
    expectServiceError(response, 503, 'service_unavailable');
    expect(response.body.detail).toMatch(/queue is unavailable/);
    expect(await residue(collectionId)).toEqual(before);
  });

  it('upload: the queue answers its check but refuses the message, 503 and the rows and original removed', async () => {
    const before = await residue(collectionId);
    // The check (GET /v2/keys) passes; the publish (POST /v2/batch) after the rows were written fails.
    await injectFault('qstash', { match: '/v2/batch' });
    await injectFault('storage', { count: 0, match: collectionId });
    const response = await upload(cast.owner.token, 'unqueued.txt', 'Stored, then taken back.\n', collectionId);
    const calls = await faultCounts();
    await clearFaults();
    expectServiceError(response, 503, 'service_unavailable');
    expect(calls.qstash?.failed).toBeGreaterThan(0);
    expect(calls.storage?.seen).toBe(1); // the original went in before the publish failed
    expect(await residue(collectionId)).toEqual(before);
  });

  it('answer scoring enqueue: the answer streams and is recorded, its evaluation stays unscored', async () => {
    const question = 'When did the Rance station open?';
    await injectFault('qstash', { match: '/v2/batch' });
    const { status, events } = await askQuestion(cast.owner.token, { question, collection_id: collectionId });
    expect(status).toBe(200);
    expect(events.at(-1)?.event).toBe('done');
    // The recording runs after the stream, and its scoring message is refused.
    const id = await eventually(async () => {
      expect((await faultCounts()).qstash?.failed).toBeGreaterThan(0);
      const [row] = await db()<{ id: string }[]>`
        select id from evaluations where user_id = ${cast.owner.id} and question = ${question}`;
      expect(row).toBeDefined();
      return (row as { id: string }).id;
    });
    await clearFaults();
    await sleep(1000);
    expect(await evaluation(id)).toEqual({ scored_at: null, scorer: null, scorer_error: null });
  });

  it('an ingest step that dies between saving its chunks and queueing them: retried, nothing doubled', async () => {
    // The API's own publish goes through; the extract step's publish of its batches fails once,
    // after its chunk rows were saved, so the delivery QStash makes again takes the "already
    // extracted" path and queues them. The document is long enough for several batches: one
    // batch would be embedded in the extract step itself, with nothing to queue.
    await injectFault('qstash', { match: '/v2/batch', skip: 1, count: 1 });
    const paragraphs = Array.from(
      { length: 400 },
      (_, i) => `Paragraph ${i} records field note ${i * 7} about river survey station ${i % 13} and its sediment samples.`,
    );
    const job = await ingestFile(cast.owner.token, 'field-notes.txt', collectionId, paragraphs.join('\n\n'));
    expect(job.chunks_total).toBeGreaterThan(32);
    const calls = (await faultCounts()).qstash;
    expect(calls?.failed).toBe(1);
    // The upload's publish, the step's failed one, and the one of its second delivery.
    expect(calls?.seen).toBeGreaterThanOrEqual(3);
    expect(job.status).toBe('succeeded');
    const chunks = await chunkRows((await documentOfJob(job.job_id)) as string);
    expect(chunks.map((c) => c.chunk_index)).toEqual([...Array(job.chunks_total).keys()]);
    expect(chunks.every((c) => c.state === 'done')).toBe(true);
    const found = await vectorIndex()
      .namespace(collectionId)
      .fetch(chunks.map((c) => c.vector_id));
    expect(found.every((v) => v !== null)).toBe(true);
  });
});
