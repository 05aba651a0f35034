import { beforeAll, describe, expect, it } from 'vitest';
import { api, db, signUp, stack, type TestUser } from '../support/client.ts';
import {
  documentOfJob,
  ingestFile,
  leftOfDocument,
  objectsUnder,
  queuedUrlJob,
  untilQuiet,
  vectorIndex,
  waitForJob,
} from '../support/ingest.ts';

// The ingest worker's cron sweep: a job whose messages were all lost is queued again, and one
// picked up too often fails in plain words. Rows are written as POST /ingest/url writes them, but
// no message is sent, which is what an outage longer than QStash's retries leaves behind.
let user: TestUser;

beforeAll(async () => {
  user = await signUp('sweep');
});

async function lostUrlJob(path: string, sweeps = 0) {
  const lost = await queuedUrlJob(user.id, `${stack.pagesUrl}${path}`);
  await db()`update ingest_jobs set updated_at = now() - interval '2 hours', sweeps = ${sweeps} where id = ${lost.jobId}`;
  return lost;
}

/** What Cloudflare's cron does every 15 minutes. */
async function runCron(workerUrl = stack.ingestUrl) {
  const response = await fetch(`${workerUrl}/__scheduled?cron=${encodeURIComponent('*/15 * * * *')}`);
  expect(response.status).toBe(200);
  await response.text();
}

describe('the ingest worker’s cron sweep', () => {
  it('queues a job whose messages were lost again, and it finishes', async () => {
    const { jobId } = await lostUrlJob('/article.html');
    const fresh = await lostUrlJob('/article.html');
    // A job still within its hour is not touched.
    await db()`update ingest_jobs set updated_at = now() where id = ${fresh.jobId}`;
    await runCron();
    const job = await waitForJob(user.token, jobId);
    expect(job.status).toBe('succeeded');
    expect(job.chunks_total).toBeGreaterThan(0);
    const [row] = await db()<
      { sweeps: number; status: string }[]
    >`select sweeps, status from ingest_jobs where id = ${fresh.jobId}`;
    expect(row).toEqual({ sweeps: 0, status: 'queued' });
  });

  it('fails a job picked up too often, with its document, in plain words', async () => {
    const { jobId, documentId } = await lostUrlJob('/article.html', 3);
    await runCron();
    const job = await waitForJob(user.token, jobId, 20_000);
    expect(job).toMatchObject({
      status: 'failed',
      error_message: 'The document could not be processed: the worker failed repeatedly',
    });
    const [left] = await db()<{ count: number }[]>`select count(*)::int as count from documents where id = ${documentId}`;
    expect(left?.count).toBe(0);
  });
});

describe('the ingest worker’s cron sweep: deletions left unfinished', () => {
  // A DELETE marks its document or collection first, then removes vectors, files and rows. One whose store failed
  // part-way, and that nobody sent again, stays marked (neither listed nor searched) with what it had not removed.
  const TEXT = 'The breakwater at Porthleven was rebuilt after the storms of 1824 with granite from Trelowarren.\n';
  const nothing = { documents: 0, chunks: 0, vectors: 0, objects: 0 };

  it('finishes a document deletion left part-way an hour ago, and leaves a recent one to its DELETE', async () => {
    const namespace = `personal-${user.id}`;
    const documentOf = async (name: string) => {
      const job = await ingestFile(user.token, name, undefined, `${name}: ${TEXT}`);
      expect(job.status).toBe('succeeded');
      return (await documentOfJob(job.job_id)) as string;
    };
    const stale = await documentOf('unfinished.txt');
    const recent = await documentOf('recent.txt');
    const before = await leftOfDocument(namespace, stale);
    expect(before).toMatchObject({ documents: 1, vectors: before.chunks });
    expect(before.objects).toBeGreaterThan(0);
    await db()`update documents set deleting_at = now() - interval '2 hours' where id = ${stale}`;
    await db()`update documents set deleting_at = now() where id = ${recent}`;

    await runCron();
    expect(
      await untilQuiet(
        () => leftOfDocument(namespace, stale),
        (left) => left.documents === 0,
        { quietMs: 0 },
      ),
    ).toEqual(nothing);
    expect((await leftOfDocument(namespace, recent)).documents).toBe(1);
    expect((await api('DELETE', `/ingest/documents/${recent}`, { token: user.token })).status).toBe(200);
    expect(await leftOfDocument(namespace, recent)).toEqual(nothing);
  });

  it('finishes a collection deletion left part-way an hour ago', async () => {
    const created = await api('POST', '/collections/', { token: user.token, body: { name: 'unfinished' } });
    const collectionId = created.body.id as string;
    const job = await ingestFile(user.token, 'harbour.txt', collectionId, TEXT);
    expect(job.status).toBe('succeeded');
    expect((await vectorIndex().info()).namespaces[collectionId]?.vectorCount).toBeGreaterThan(0);
    await db()`update collections set deleting_at = now() - interval '2 hours' where id = ${collectionId}`;
    expect((await api('GET', `/collections/${collectionId}/documents`, { token: user.token })).status).toBe(404);

    await runCron();
    const left = async () => ({
      rows: (await db()`select 1 from collections where id = ${collectionId}`).length,
      vectors: (await vectorIndex().info()).namespaces[collectionId]?.vectorCount ?? 0,
      objects: (await objectsUnder(collectionId)).length,
    });
    expect(await untilQuiet(left, (now) => now.rows === 0, { quietMs: 0 })).toEqual({ rows: 0, vectors: 0, objects: 0 });
  });
});

describe('the scoring worker’s cron sweep', () => {
  /** An answer whose scoring message never went out, recorded long enough ago for its next sweep (30 min × sweeps + 1). */
  async function lostAnswer(sweeps = 0) {
    const [row] = await db()<{ id: string }[]>`
      insert into evaluations (user_id, question, answer, sources, total_latency_ms, retrieval_latency_ms, engine,
                               retrieval_strategy, top_k, created_at, sweeps)
      values (${user.id}, 'Who kept the light?', 'Osric Penhallow kept it [1].',
              ${db().json([{ text: 'Osric Penhallow kept the light for thirty-one years.' }] as never)}, 100, 10, 'test',
              'similarity', 5, now() - make_interval(mins => 31 * (${sweeps} + 1)), ${sweeps})
      returning id`;
    return row?.id as string;
  }

  async function scored(id: string) {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const [row] = await db()<{ scored_at: string | null; faithfulness_score: number | null; scorer_error: string | null }[]>`
        select scored_at, faithfulness_score, scorer_error from evaluations where id = ${id}`;
      if (row?.scored_at) return row;
      if (Date.now() > deadline) throw new Error(`evaluation ${id} not scored`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  it('queues an answer whose scoring was lost again, and it is scored', async () => {
    const id = await lostAnswer();
    await runCron(stack.scoringUrl);
    expect(await scored(id)).toMatchObject({ faithfulness_score: 1, scorer_error: null });
  });

  it('records a scorer error for an answer queued too often', async () => {
    const id = await lostAnswer(3);
    await runCron(stack.scoringUrl);
    expect(await scored(id)).toMatchObject({ faithfulness_score: null, scorer_error: 'Scoring failed after repeated attempts' });
  });
});
