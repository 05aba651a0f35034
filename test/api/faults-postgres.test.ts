import { connect, type Socket } from 'node:net';
import postgres from 'postgres';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createFaults } from '../../devstack/faults.ts';
import { freePort } from '../../devstack/ports.ts';
import { createPostgresServer, type RunningPostgres } from '../../devstack/postgres/server.ts';
import { api, db, skipRealPostgres, stack } from '../support/client.ts';
import {
  deadLetters,
  evaluation,
  eventually,
  expectServiceError,
  faultCounts,
  insertEvaluation,
  residue,
  retryDeadLetters,
  uploadInTwoParts,
  whileDown,
} from '../support/faults.ts';
import { type Cast, castWithCollection } from '../support/fixtures.ts';
import {
  chunkRows,
  clearFaults,
  documentOfJob,
  ingestFile,
  injectFault,
  upload,
  vectorIndex,
  waitForJob,
} from '../support/ingest.ts';
import { askQuestion, dataOf } from '../support/sse.ts';

// The database taken down for the workers (devstack/postgres/proxy.ts), alone or for one worker
// (`match`). The tests read what was left through their own, direct connection.
let cast: Cast;
let collectionId: string;
let documentId: string;

beforeAll(async () => {
  if (skipRealPostgres) return;
  ({ cast, collectionId } = await castWithCollection('Postgres faults'));
  const job = await ingestFile(cast.owner.token, 'tides.txt', collectionId, 'Spring tides follow the new and full moon.\n');
  expect(job.status).toBe('succeeded');
  documentId = (await documentOfJob(job.job_id)) as string;
});
afterEach(() => clearFaults());

const unavailable = (response: Parameters<typeof expectServiceError>[0]) =>
  expectServiceError(response, 503, 'service_unavailable');

describe.skipIf(skipRealPostgres)('Postgres down for the API', () => {
  it('reads behind sign-in (GET /collections): 503, and served again once it is back', async () => {
    const response = await whileDown('postgres', () => api('GET', '/collections/', { token: cast.memberQuery.token }));
    unavailable(response);
    expect(response.body.detail).toMatch(/database is unavailable/);
    expect((await api('GET', '/collections/', { token: cast.memberQuery.token })).status).toBe(200);
  });

  it('create collection: 503, and no collection half-made', async () => {
    const name = `never-${Date.now()}`;
    unavailable(await whileDown('postgres', () => api('POST', '/collections/', { token: cast.owner.token, body: { name } })));
    const rows = await db()`select id from collections where name = ${name}`;
    expect(rows).toHaveLength(0);
  });

  it('upload: 503 before the body is read, nothing stored', async () => {
    const before = await residue(collectionId);
    unavailable(await whileDown('postgres', () => upload(cast.owner.token, 'never.txt', 'Never stored.\n', collectionId)));
    expect(await residue(collectionId)).toEqual(before);
  });

  it('upload: lost after the original was stored, 503 and the original removed', async () => {
    const before = await residue(collectionId);
    // Counts (never fails) the API's Storage calls for this collection: the original did go in.
    await injectFault('storage', { count: 0, match: collectionId });
    const response = await uploadInTwoParts(cast.owner.token, collectionId, 'midway.txt', 'Half now, half later.\n', async () => {
      // The checks ran before the body was read; the connection they used is cut now.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await injectFault('postgres', { match: 'api' });
    });
    const storageCalls = (await faultCounts()).storage?.seen ?? 0;
    await clearFaults();
    unavailable(response);
    // The original went in (its clean-up lists and removes by body, which `match` does not see).
    expect(storageCalls).toBe(1);
    expect(await residue(collectionId)).toEqual(before);
  });

  it('job poll: 503 while down, the same job once it is back', async () => {
    const created = await upload(cast.owner.token, 'polled.txt', 'Polled while the database is down.\n', collectionId);
    expect(created.status).toBe(200);
    unavailable(
      await whileDown('postgres', () => api('GET', `/ingest/jobs/${created.body.job_id}`, { token: cast.owner.token })),
    );
    const job = await waitForJob(cast.owner.token, created.body.job_id);
    expect(job.status).toBe('succeeded');
  });

  it('query/search and query/stream: 503 before any event, no evaluation recorded', async () => {
    const count = async () =>
      (await db()<{ n: number }[]>`select count(*)::int as n from evaluations where user_id = ${cast.owner.id}`)[0]?.n;
    const before = await count();
    const question = { question: 'When are spring tides?', collection_id: collectionId };
    await injectFault('postgres', { match: 'api' });
    unavailable(await api('POST', '/query/search', { token: cast.owner.token, body: question }));
    const streamed = await askQuestion(cast.owner.token, question);
    await clearFaults();
    expect(streamed.contentType).toMatch(/^application\/json/);
    unavailable({ status: streamed.status, body: streamed.json });
    expect(await count()).toBe(before);
  });

  it('answer stream: the database lost mid-answer, the answer still ends with done, its record is lost', async () => {
    const count = async () =>
      (await db()<{ n: number }[]>`select count(*)::int as n from evaluations where user_id = ${cast.memberQuery.id}`)[0]?.n;
    const before = await count();
    let cut = false;
    const { status, events } = await askQuestion(
      cast.memberQuery.token,
      { question: 'When are spring tides?', collection_id: collectionId },
      {
        onEvent: async (event) => {
          if (event.event !== 'metadata' || cut) return;
          cut = true;
          await injectFault('postgres', { match: 'api' });
        },
      },
    );
    expect(status).toBe(200);
    expect(events[0]?.event).toBe('metadata');
    expect(events.at(-1)?.event).toBe('done');
    // The exchange is recorded before `done`, through a connection that is refused: it is lost (logged), and
    // `done` names no record to rate.
    expect(dataOf(events, 'done')?.evaluation_id).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 500));
    await clearFaults();
    expect(await count()).toBe(before);
  });

  it('document delete and collection delete: 503, everything whole', async () => {
    const before = await residue(collectionId);
    await injectFault('postgres', { match: 'api' });
    unavailable(await api('DELETE', `/collections/${collectionId}/documents/${documentId}`, { token: cast.owner.token }));
    unavailable(await api('DELETE', `/collections/${collectionId}`, { token: cast.owner.token }));
    await clearFaults();
    expect(await residue(collectionId)).toEqual(before);
  });
});

describe.skipIf(skipRealPostgres)('Postgres down for the ingest worker', () => {
  it('a step that cannot connect is retried: the job resumes with nothing doubled', async () => {
    // The ingest worker's first two connections are refused: the extract step fails twice, then runs.
    await injectFault('postgres', { match: 'ingest', count: 2 });
    const job = await ingestFile(cast.owner.token, 'docx-tables.docx', collectionId);
    expect((await faultCounts()).postgres?.failed).toBe(2);
    expect(job.status).toBe('succeeded');
    const chunks = await chunkRows((await documentOfJob(job.job_id)) as string);
    expect(chunks.map((c) => c.chunk_index)).toEqual([...Array(job.chunks_total).keys()]);
    const found = await vectorIndex()
      .namespace(collectionId)
      .fetch(chunks.map((c) => c.vector_id));
    expect(found.every((v) => v !== null)).toBe(true);
  });

  it('down past every retry: the job waits in the dead-letter queue, and a retry from it finishes the job', async () => {
    await injectFault('postgres', { match: 'ingest' });
    const created = await upload(cast.owner.token, 'dead-lettered.txt', 'Waits out the outage in the DLQ.\n', collectionId);
    expect(created.status).toBe(200);
    const jobId = created.body.job_id as string;
    // The step and then its failure callback each used every retry: neither could write.
    const letters = await eventually(async () => {
      const found = await deadLetters(jobId);
      expect(found.map((l) => l.url.replace(stack.ingestUrl, '')).sort()).toEqual(['/failures', '/steps']);
      return found;
    });
    expect((await api('GET', `/ingest/jobs/${jobId}`, { token: cast.owner.token })).body.status).toBe('queued');
    await clearFaults();
    // The operator's recovery: the step again (not its failure callback, which would fail the job).
    await retryDeadLetters(letters.filter((l) => l.url.endsWith('/steps')).map((l) => l.dlqId));
    const job = await waitForJob(cast.owner.token, jobId);
    expect(job.status).toBe('succeeded');
    expect((await chunkRows((await documentOfJob(jobId)) as string)).length).toBe(job.chunks_total);
  });
});

describe.skipIf(skipRealPostgres)('Postgres down for the scoring worker', () => {
  it('the record stays unscored in the dead-letter queue, and a retry from it scores it', async () => {
    const id = await insertEvaluation(collectionId, cast.owner.id);
    await injectFault('postgres', { match: 'scoring' });
    const published = await fetch(`${stack.qstashUrl}/v2/publish/${stack.scoringUrl}/score`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${stack.qstashToken}`,
        'content-type': 'application/json',
        'upstash-retries': '3',
        'upstash-failure-callback': `${stack.scoringUrl}/failures`,
      },
      body: JSON.stringify({ evaluation_id: id }),
    });
    expect(published.ok).toBe(true);
    const letters = await eventually(async () => {
      const found = await deadLetters(id);
      expect(found).toHaveLength(2);
      return found;
    });
    expect(await evaluation(id)).toEqual({ scored_at: null, scorer: null, scorer_error: null });
    await clearFaults();
    await retryDeadLetters(letters.filter((l) => l.url.endsWith('/score')).map((l) => l.dlqId));
    const scored = await eventually(async () => {
      const row = await evaluation(id);
      expect(row?.scored_at).not.toBeNull();
      return row;
    });
    expect(scored?.scorer_error).toBeNull();
  });
});

describe.skipIf(skipRealPostgres)('the postgres fault, on either engine', () => {
  /**
   * A simple Query written straight onto a client's socket: whether any answer comes back before the
   * socket closes. Not through postgres.js, which drops a query sent between its socket's reset and
   * its 'close' (3.4.9): that query would neither answer nor fail.
   */
  function sendQuery(socket: Socket, text: string): Promise<'answered' | 'closed'> {
    return new Promise((resolve) => {
      if (socket.destroyed) return resolve('closed');
      socket.once('data', () => resolve('answered'));
      socket.once('close', () => resolve('closed'));
      const body = Buffer.from(`${text}\0`);
      const message = Buffer.alloc(5 + body.length);
      message.write('Q', 0, 'latin1');
      message.writeInt32BE(4 + body.length, 1);
      body.copy(message, 5);
      socket.write(message);
    });
  }

  async function exercise(pg: RunningPostgres) {
    const faults = createFaults();
    const proxy = await pg.gate(['client'], (client) => faults.admit('postgres', client));
    faults.onSet('postgres', (match) => proxy.cut(match));
    const set = (fault: object) =>
      faults.app.request('/', { method: 'POST', body: JSON.stringify({ service: 'postgres', ...fault }) });
    // `socket` is postgres.js's documented custom socket ("Custom socket" in its README), missing from its types.
    const client = (options: { socket?: () => Promise<Socket> } = {}) =>
      postgres(proxy.urls.client, {
        max: 1,
        prepare: false,
        onnotice: () => {},
        connect_timeout: 2,
        ...(options as Record<string, never>),
      });
    // A client per query, as the workers have one per request.
    const once = async (text: string) => {
      const sql = client();
      try {
        return await sql.unsafe(text);
      } finally {
        await sql.end({ timeout: 0 });
      }
    };
    // A client that stays connected, on a socket the test can see.
    let socket: Socket | undefined;
    const held = client({
      socket: () =>
        new Promise<Socket>((resolve, reject) => {
          const url = new URL(proxy.urls.client);
          socket = connect({ host: url.hostname, port: Number(url.port) });
          socket.once('connect', () => resolve(socket as Socket)).once('error', reject);
        }),
    });
    try {
      expect(await held`select 1 as one`).toEqual([{ one: 1 }]);
      // Down: the open connection is reset before setting the fault answers (devstack/faults.ts), so a
      // query sent on it after that gets no answer, only the end of the connection.
      expect((await set({})).status).toBe(200);
      expect(await sendQuery(socket as Socket, 'select 1')).toBe('closed');
      await expect(once('select 1')).rejects.toThrow(/ECONNRESET/);
      await faults.app.request('/', { method: 'DELETE' });
      expect(await once('select 2 as two')).toEqual([{ two: 2 }]);
      // `count` refuses that many new connections; `match` names the client.
      await set({ count: 1, match: 'client' });
      await expect(once('select 3')).rejects.toThrow(/ECONNRESET/);
      expect(await once('select 4 as four')).toEqual([{ four: 4 }]);
      expect((await set({ match: 'someone-else' })).status).toBe(200);
      expect(await once('select 5 as five')).toEqual([{ five: 5 }]);
      expect((await set({ method: 'GET' })).status).toBe(400);
    } finally {
      await held.end({ timeout: 0 });
      await proxy.stop();
    }
  }

  // It starts a PGlite of its own (WebAssembly, the migrations): slow while the browser tests share the cores.
  // PGLITE_FAULT_REPEATS runs it again that many times: bench/faults/pglite-fault-loop.sh, the evidence that it
  // does not fail by chance under load.
  const repeats = Number(process.env.PGLITE_FAULT_REPEATS ?? 0);
  it('on PGlite, whose thread listens for each client itself', { timeout: 90_000, repeats }, async () => {
    const pglite = await createPostgresServer({ host: '127.0.0.1', port: await freePort() });
    try {
      await exercise(pglite);
    } finally {
      await pglite.stop();
    }
  });

  it('in front of a real PostgreSQL', async () => {
    await exercise(await createPostgresServer({ databaseUrl: stack.databaseUrl, host: '127.0.0.1', port: 0 }));
  });
});
