import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Sql } from '#core/db/client.ts';
import { endJob } from '#core/db/job-endings.ts';
import { createJobRepo } from '#core/db/jobs.ts';
import { createRunRepo } from '#core/db/source-runs.ts';
import { createWebhookRepo } from '#core/db/webhooks.ts';
import { ingestPayload, sourceSyncedPayload, WEBHOOK_EVENTS } from '#core/webhooks/payload.ts';
import { freePort } from '../../devstack/ports.ts';
import { migrate } from '../../devstack/postgres/migrate.ts';
import { createPostgresServer, type RunningPostgres } from '../../devstack/postgres/server.ts';

// The payloads are built in SQL, in the statement that ends a job or a sync (so every attempt sends the same
// bytes); the schema the OpenAPI description shows must be what that SQL builds, key for key.
let database: RunningPostgres;
let sql: Sql;
const user = randomUUID();
let collection: string;

beforeAll(async () => {
  database = await createPostgresServer({ host: '127.0.0.1', port: await freePort() });
  // Migrated as the devstack migrates (array types fetched); then queried through the product's own client.
  const migrating = postgres(database.url, { max: 1, prepare: false, onnotice: () => {} });
  await migrate(migrating);
  await migrating.end();
  sql = connect(database.url);
  await sql`insert into auth.users (id, email) values (${user}, 'payloads@example.com')`;
  const [made] = await sql<{ id: string }[]>`
    insert into collections (user_id, name) values (${user}, 'Payloads') returning id`;
  collection = made?.id as string;
  await createWebhookRepo(sql).insert(user, {
    url: 'https://example.com/hook',
    events: [...WEBHOOK_EVENTS],
    collectionId: null,
    secret: 'whsec_test',
  });
}, 120_000);

afterAll(async () => {
  await sql?.end({ timeout: 1 });
  await database?.stop();
});

/** The payloads the statement wrote for these deliveries, parsed from the text every attempt sends. */
async function payloadsOf(deliveries: string[]): Promise<unknown[]> {
  expect(deliveries).toHaveLength(1);
  const rows = await sql<{ payload: string }[]>`select payload from webhook_deliveries where id in ${sql(deliveries)}`;
  return rows.map((row) => JSON.parse(row.payload));
}

async function queuedJob(collectionId: string | null): Promise<string> {
  const id = randomUUID();
  await createJobRepo(sql).insertWithDocument(
    {
      id: randomUUID(),
      collection_id: collectionId,
      user_id: user,
      name: 'notes.txt',
      source_kind: 'upload',
      source_url: null,
      content_type: 'text/plain',
      doc_type: 'txt',
      size_bytes: 5,
      storage_path: null,
      chunk_size: 512,
      metadata: {},
    },
    { id, user_id: user, collection_id: collectionId, source: 'notes.txt', api_key_id: null },
  );
  return id;
}

describe('the SQL-built webhook payloads match their schema', () => {
  for (const [status, message] of [
    ['succeeded', null],
    ['partial', 'Only 3 of 5 pages were read'],
    ['failed', 'The file could not be read'],
  ] as const) {
    it(`ingest.${status}, in a collection and in the personal namespace`, async () => {
      for (const place of [collection, null]) {
        const job = await queuedJob(place);
        const ending = await endJob(sql, job, status, message);
        for (const payload of await payloadsOf(ending.deliveries)) {
          expect(ingestPayload.strict().parse(payload)).toMatchObject({
            event: `ingest.${status}`,
            job_id: job,
            collection_id: place,
            error_message: message,
          });
        }
      }
    });
  }

  it('ingest.failed for a cancelled job, which names no document', async () => {
    const job = await queuedJob(collection);
    const ending = await createJobRepo(sql).cancel(job, user);
    for (const payload of await payloadsOf(ending.deliveries)) {
      expect(ingestPayload.strict().parse(payload)).toMatchObject({ event: 'ingest.failed', document_id: null });
    }
  });

  it('source.synced', async () => {
    const [source] = await sql<{ id: string; url: string }[]>`
      insert into sources (user_id, collection_id, kind, url) values (${user}, ${collection}, 'site', 'https://example.com/')
      returning id, url`;
    const runs = createRunRepo(sql);
    const run = await runs.start(source as { id: string; url: string }, 'https://example.com/', 'manual', null);
    const counts = { found: 9, fetched: 8, added: 7, changed: 6, unchanged: 5, failed: 4, skipped: 3, gone: 2, removed: 1 };
    const ending = await runs.finish(run?.id as string, { status: 'partial', message: 'Stopped at the page limit', counts });
    for (const payload of await payloadsOf(ending.deliveries)) {
      expect(sourceSyncedPayload.strict().parse(payload)).toMatchObject({
        event: 'source.synced',
        run_id: run?.id,
        source_id: source?.id,
        status: 'partial',
        counts,
      });
      // Nothing besides the run's counts either.
      expect((payload as { counts: unknown }).counts).toEqual(counts);
    }
  });
});
