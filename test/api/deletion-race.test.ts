import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adaptersFor } from '#core/adapters/index.ts';
import type { ObjectStore } from '#core/adapters/storage.ts';
import type { VectorStore } from '#core/adapters/vectors.ts';
import type { Caller } from '#core/caller.ts';
import { connect } from '#core/db/client.ts';
import { createCollectionRepo } from '#core/db/collections.ts';
import { createDocumentRepo } from '#core/db/documents.ts';
import { createPipelineDb, type PipelineJob } from '#core/db/ingest-pipeline.ts';
import { createQuotaRepo } from '#core/db/ingest-quota.ts';
import { createJobRepo } from '#core/db/jobs.ts';
import { createDeliveryRepo } from '#core/db/webhook-deliveries.ts';
import { DAILY_INGEST_CHUNKS } from '#core/limits.ts';
import { createLogger } from '#core/log.ts';
import { documentFolder, namespaceFor, vectorId } from '#core/namespaces.ts';
import { createAccessService } from '../../src/api/services/access.ts';
import type { Audit } from '../../src/api/services/audit.ts';
import { createCollectionService } from '../../src/api/services/collections.ts';
import { createIngestService } from '../../src/api/services/ingest/index.ts';
import { createPurge } from '../../src/api/services/purge.ts';
import type { PipelineDeps } from '../../workers/ingest/src/pipeline/deps.ts';
import { embedBatch } from '../../workers/ingest/src/pipeline/embed.ts';
import { api, signUp, stack, type TestUser } from '../support/client.ts';
import { leftOfDocument, objectsUnder, queuedJob, vectorIndex, vectorsOf } from '../support/ingest.ts';

// Deletion against an embed step in flight, interleaved step by step: the real purge (src/api/services/purge.ts),
// the real collection deletion and the real embed step (workers/ingest/src/pipeline/embed.ts), each run here
// on the production adapters against the devstack's Postgres, Storage and Vector index, with one of them held
// at a chosen point (a gate around one adapter call) while the other runs. Issue 21: a batch that upserted
// while the purge removed the files saw the row still there and kept its vectors, which outlived the row.

const CHUNKS = 3;
/** What is deleted, and in which order, is this file's; what the audit log records is audit.test.ts's. */
const noAudit: Audit = async () => {};
const sql = connect(stack.databaseUrl);
afterAll(() => sql.end({ timeout: 5 }));

const adapters = adaptersFor({
  OPENAI_BASE_URL: stack.openaiBaseUrl,
  OPENAI_API_KEY: stack.modelApiKey,
  // The workers' embedding model, when the devstack serves one (its index is then hybrid).
  ...(stack.apiVars.EMBEDDING_MODEL ? { EMBEDDING_MODEL: stack.apiVars.EMBEDDING_MODEL } : {}),
  SUPABASE_URL: stack.supabaseUrl,
  SUPABASE_SERVICE_ROLE_KEY: stack.serviceRoleKey,
  STORAGE_BUCKET: stack.storageBucket,
  UPSTASH_VECTOR_REST_URL: stack.vectorUrl,
  UPSTASH_VECTOR_REST_TOKEN: stack.vectorToken,
  QSTASH_URL: stack.qstashUrl,
  QSTASH_TOKEN: stack.qstashToken,
});
const pipelineDb = createPipelineDb(sql);
const documents = createDocumentRepo(sql);
const collections = createCollectionRepo(sql);

/** workerd's crypto.DigestStream, which Node lacks: the ingest service hashes an upload as it stores it. */
class DigestStream extends WritableStream<Uint8Array> {
  readonly digest: Promise<ArrayBuffer>;
  constructor(algorithm: string) {
    const hash = createHash(algorithm.replace('-', '').toLowerCase());
    let resolve!: (digest: ArrayBuffer) => void;
    const digest = new Promise<ArrayBuffer>((done) => {
      resolve = done;
    });
    super({
      write: (chunk) => {
        hash.update(chunk);
      },
      close: () => resolve(new Uint8Array(hash.digest()).buffer),
    });
    this.digest = digest;
  }
}
if (!('DigestStream' in crypto)) Object.defineProperty(crypto, 'DigestStream', { value: DigestStream });

/** A point one side waits at until the test opens it; `reached` resolves once the side is waiting there. */
function gate() {
  let open!: () => void;
  let arrive!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  const reached = new Promise<void>((resolve) => {
    arrive = resolve;
  });
  return {
    reached,
    open,
    async wait() {
      arrive();
      await opened;
    },
  };
}
type Gate = ReturnType<typeof gate>;

/** The vector store with one of its calls held at a gate, before or after the call itself. */
function holdingVectors(method: 'upsert' | 'delete' | 'deleteNamespace', at: Gate, when: 'before' | 'after'): VectorStore {
  const real = adapters.vectors;
  const held = async (...args: unknown[]) => {
    if (when === 'before') await at.wait();
    const result = await (real[method] as (...a: unknown[]) => Promise<unknown>)(...args);
    if (when === 'after') await at.wait();
    return result;
  };
  return { ...real, [method]: held } as VectorStore;
}

function holdingFolderRemoval(at: Gate): ObjectStore {
  const real = adapters.store;
  return {
    ...real,
    async removeFolder(folder: string) {
      await at.wait();
      return real.removeFolder(folder);
    },
  };
}

/** The documents repository with its row delete held at a gate. */
function holdingRowDelete(at: Gate): typeof documents {
  return {
    ...documents,
    async delete(id: string) {
      await at.wait();
      return documents.delete(id);
    },
  };
}

function stepDeps(vectors: VectorStore = adapters.vectors): PipelineDeps {
  return {
    db: pipelineDb,
    deliveries: createDeliveryRepo(sql),
    quota: { ...createQuotaRepo(sql), perDay: DAILY_INGEST_CHUNKS },
    store: adapters.store,
    vectors,
    models: adapters.models,
    queue: adapters.queue,
    workerUrl: stack.ingestUrl,
    batchSize: 32,
    fetchUrl: () => Promise.reject(new Error('not used')),
    log: createLogger({ worker: 'ingest', request_id: 'deletion-race' }),
  };
}

/**
 * A document of `CHUNKS` pending chunks, its job processing and not yet read to the end (so that no batch
 * finishes it), and its original stored: what an embed step finds mid-job. Each chunk says `word`.
 */
async function documentMidJob(user: TestUser, collectionId: string | null, word: string) {
  const { jobId, documentId } = await queuedJob(user.id, collectionId);
  const namespace = namespaceFor(collectionId, user.id);
  const chunks = await Promise.all(
    Array.from({ length: CHUNKS }, async (_, i) => ({
      chunk_index: i,
      vector_id: await vectorId(documentId, i),
      chunk_type: 'text' as const,
      text: `The ${word} ledger, part ${i}: ${word} entries reconciled quarterly.`,
      metadata: {},
      image_path: null,
    })),
  );
  await pipelineDb.saveRange(jobId, documentId, chunks, [], { extractCursor: 1, extracted: false, decodedBytes: 0 });
  await pipelineDb.markProcessing(jobId);
  await adapters.store.put(`${documentFolder(namespace, documentId)}/original.txt`, new Blob(['x']).stream(), 'text/plain');
  const job = (await pipelineDb.job(jobId)) as PipelineJob;
  return {
    documentId,
    namespace,
    job: job as PipelineJob & { document: NonNullable<PipelineJob['document']> },
    /** The embed step for every chunk, as QStash would deliver it. */
    embed: (vectors?: VectorStore) =>
      embedBatch(
        stepDeps(vectors),
        job as PipelineJob & { document: NonNullable<PipelineJob['document']> },
        {
          from: 0,
          to: CHUNKS,
        },
        { retried: 0, final: true },
      ),
  };
}

async function createCollection(user: TestUser): Promise<string> {
  const created = await api('POST', '/collections/', { token: user.token, body: { name: 'race' } });
  expect(created.status).toBe(200);
  return created.body.id;
}

const callerOf = (user: TestUser): Caller => ({ id: user.id, email: user.email, isAdmin: false, key: null });

async function searchedDocuments(user: TestUser, collectionId: string | null, question: string) {
  const response = await api('POST', '/query/search', {
    token: user.token,
    body: { question, top_k: 10, ...(collectionId ? { collection_id: collectionId } : {}) },
  });
  return {
    status: response.status,
    sources: (response.body.sources ?? []) as { document_id: string; source: string; text: string }[],
  };
}

/** The vectors a namespace holds; none when it does not exist. */
const namespaceVectors = async (namespace: string) => (await vectorIndex().info()).namespaces[namespace]?.vectorCount ?? 0;

let user: TestUser;
beforeAll(async () => {
  user = await signUp('deletion-race');
});

describe('a document deleted while an embed step upserts its vectors (the real purge and embed step)', () => {
  // Each place the purge can be held, with the whole embed step run while it waits there.
  const purgeHeld = {
    'after marking, before its vectors go': (at: Gate) =>
      createPurge({ documents, store: adapters.store, vectors: holdingVectors('delete', at, 'before') }),
    'after its vectors went, while its files are removed (the reported case)': (at: Gate) =>
      createPurge({ documents, store: holdingFolderRemoval(at), vectors: adapters.vectors }),
    'after its files went, before its row goes': (at: Gate) =>
      createPurge({ documents: holdingRowDelete(at), store: adapters.store, vectors: adapters.vectors }),
  };

  for (const [where, purgeHeldAt] of Object.entries(purgeHeld)) {
    it(`purge held ${where}: the step takes its vectors back, 0 left`, async () => {
      const collectionId = await createCollection(user);
      const doc = await documentMidJob(user, collectionId, 'quillwort');
      const at = gate();
      const purging = purgeHeldAt(at)(doc.job.document);
      await at.reached;
      await doc.embed();
      at.open();
      await purging;
      expect(await leftOfDocument(doc.namespace, doc.documentId)).toEqual({ documents: 0, chunks: 0, vectors: 0, objects: 0 });
      expect(await namespaceVectors(doc.namespace)).toBe(0);
    });
  }

  // The step held at each side of its upsert while the whole purge runs.
  for (const when of ['before', 'after'] as const) {
    it(`embed step held ${when} its upsert while the whole purge runs: 0 left`, async () => {
      const doc = await documentMidJob(user, null, 'bladderwrack');
      const at = gate();
      const embedding = doc.embed(holdingVectors('upsert', at, when));
      await at.reached;
      await createPurge({ documents, store: adapters.store, vectors: adapters.vectors })(doc.job.document);
      at.open();
      await embedding;
      expect(await leftOfDocument(doc.namespace, doc.documentId)).toEqual({ documents: 0, chunks: 0, vectors: 0, objects: 0 });
      expect(await vectorsOf(doc.namespace, doc.documentId)).toEqual([]);
    });
  }

  it('is neither searched nor listed from the moment its deletion begins, and a retried DELETE finishes it', async () => {
    const collectionId = await createCollection(user);
    const doc = await documentMidJob(user, collectionId, 'saltmarsh');
    const other = await documentMidJob(user, collectionId, 'saltmarsh');
    await doc.embed();
    await other.embed();
    const before = await searchedDocuments(user, collectionId, 'saltmarsh ledger');
    expect(new Set(before.sources.map((s) => s.document_id))).toEqual(new Set([doc.documentId, other.documentId]));

    // Held with its vectors still in the index: a failed vector removal leaves the same state.
    const at = gate();
    const purging = createPurge({ documents, store: adapters.store, vectors: holdingVectors('delete', at, 'before') })(
      doc.job.document,
    );
    await at.reached;
    expect(await vectorsOf(doc.namespace, doc.documentId)).toHaveLength(CHUNKS);
    const during = await searchedDocuments(user, collectionId, 'saltmarsh ledger');
    expect(during.status).toBe(200);
    expect(during.sources.length).toBeGreaterThan(0);
    expect(during.sources.every((s) => s.document_id === other.documentId)).toBe(true);
    const listed = await api('GET', `/collections/${collectionId}/documents`, { token: user.token });
    expect(listed.body.map((d: { id: string }) => d.id)).toEqual([other.documentId]);
    // A new version of it cannot be started: it is gone already.
    const replaced = await api('POST', '/ingest/url', {
      token: user.token,
      body: { url: `${stack.pagesUrl}/article.html`, collection_id: collectionId, replace_document_id: doc.documentId },
    });
    expect(replaced.status).toBe(404);

    // The DELETE that a failure part-way would need again: it finds the marked row and finishes.
    const again = await api('DELETE', `/collections/${collectionId}/documents/${doc.documentId}`, { token: user.token });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    at.open();
    await purging;
    expect(await leftOfDocument(doc.namespace, doc.documentId)).toEqual({ documents: 0, chunks: 0, vectors: 0, objects: 0 });
    expect((await searchedDocuments(user, collectionId, 'saltmarsh ledger')).sources.map((s) => s.document_id)).toEqual(
      expect.arrayContaining([other.documentId]),
    );
  });
});

describe('a collection deleted while an embed step upserts into its namespace (the real deletion and embed step)', () => {
  const deleting = (vectors: VectorStore, store: ObjectStore) =>
    createCollectionService({ collections, access: createAccessService(collections), audit: noAudit, store, vectors });

  const deletionHeld = {
    'after marking, before its namespace goes': (at: Gate) =>
      deleting(holdingVectors('deleteNamespace', at, 'before'), adapters.store),
    'after its namespace went, while its files are removed': (at: Gate) => deleting(adapters.vectors, holdingFolderRemoval(at)),
  };

  for (const [where, serviceHeldAt] of Object.entries(deletionHeld)) {
    it(`deletion held ${where}: the step takes its vectors back, 0 left in the namespace`, async () => {
      const collectionId = await createCollection(user);
      const doc = await documentMidJob(user, collectionId, 'foxglove');
      const at = gate();
      const removing = serviceHeldAt(at).delete(callerOf(user), collectionId);
      await at.reached;
      // From the mark on, the collection is gone for everyone but its deletion (soft: the count below still runs).
      expect.soft((await api('GET', `/collections/${collectionId}/documents`, { token: user.token })).status).toBe(404);
      expect.soft((await searchedDocuments(user, collectionId, 'foxglove ledger')).status).toBe(404);
      const listed = await api('GET', '/collections/', { token: user.token });
      expect.soft(listed.body.map((c: { id: string }) => c.id)).not.toContain(collectionId);
      await doc.embed();
      at.open();
      await removing;
      expect(await namespaceVectors(collectionId)).toBe(0);
      expect(await objectsUnder(collectionId)).toEqual([]);
      expect((await sql`select 1 from collections where id = ${collectionId}`).length).toBe(0);
    });
  }

  it('embed step held before its upsert while the whole deletion runs: 0 left in the namespace', async () => {
    const collectionId = await createCollection(user);
    const doc = await documentMidJob(user, collectionId, 'marram');
    const at = gate();
    const embedding = doc.embed(holdingVectors('upsert', at, 'before'));
    await at.reached;
    await deleting(adapters.vectors, adapters.store).delete(callerOf(user), collectionId);
    at.open();
    await embedding;
    expect(await namespaceVectors(collectionId)).toBe(0);
    expect(await objectsUnder(collectionId)).toEqual([]);
  });

  it('an upload that passed its check before the deletion began, and stored its file after the folder went, leaves nothing', async () => {
    const collectionId = await createCollection(user);
    const putAt = gate();
    const store: ObjectStore = {
      ...adapters.store,
      async put(key, body, contentType) {
        await putAt.wait();
        return adapters.store.put(key, body, contentType);
      },
    };
    const ingest = createIngestService({
      access: createAccessService(collections),
      audit: noAudit,
      documents,
      jobs: createJobRepo(sql),
      deliveries: createDeliveryRepo(sql),
      purge: createPurge({ documents, store: adapters.store, vectors: adapters.vectors }),
      quota: createQuotaRepo(sql),
      chunksPerDay: DAILY_INGEST_CHUNKS,
      store,
      queue: adapters.queue,
      workerUrl: stack.ingestUrl,
      checkUrl: () => Promise.reject(new Error('not used')),
      log: createLogger({ worker: 'api', request_id: 'deletion-race' }),
    });
    const bytes = new TextEncoder().encode('The late ledger: entries that arrived as the collection went.\n');
    const uploading = ingest.uploadFile(callerOf(user), collectionId, async () => ({
      filename: 'late.txt',
      fields: {},
      body: new Blob([bytes]).stream(),
      size: () => bytes.byteLength,
      tooLarge: () => false,
      settle: () => Promise.resolve(),
    }));
    // Its checks passed; its file waits to be stored.
    await Promise.race([
      putAt.reached,
      uploading.then(
        () => Promise.reject(new Error('answered before storing its file')),
        (error: unknown) => Promise.reject(error),
      ),
    ]);

    // The deletion runs up to its last step: marked, namespace and folder gone, the row still there.
    const rowAt = gate();
    const removing = createCollectionService({
      collections: {
        ...collections,
        async delete(id: string) {
          await rowAt.wait();
          return collections.delete(id);
        },
      },
      access: createAccessService(collections),
      audit: noAudit,
      store: adapters.store,
      vectors: adapters.vectors,
    }).delete(callerOf(user), collectionId);
    await rowAt.reached;

    putAt.open();
    await expect(uploading).rejects.toMatchObject({ kind: 'not_found' });
    rowAt.open();
    await removing;
    expect(await objectsUnder(collectionId)).toEqual([]);
    const [rows] = await sql<{ documents: number; jobs: number }[]>`
      select (select count(*)::int from documents where collection_id = ${collectionId}) as documents,
             (select count(*)::int from ingest_jobs where collection_id = ${collectionId}) as jobs`;
    expect(rows).toEqual({ documents: 0, jobs: 0 });
  });

  it('a deletion that failed part-way is finished by the same DELETE', async () => {
    const collectionId = await createCollection(user);
    const doc = await documentMidJob(user, collectionId, 'samphire');
    await doc.embed();
    expect(await namespaceVectors(collectionId)).toBe(CHUNKS);
    const failing = deleting(adapters.vectors, {
      ...adapters.store,
      removeFolder: () => Promise.reject(new Error('storage down')),
    });
    await expect(failing.delete(callerOf(user), collectionId)).rejects.toThrow('storage down');
    expect(await namespaceVectors(collectionId)).toBe(0);
    expect((await api('GET', `/collections/${collectionId}/documents`, { token: user.token })).status).toBe(404);
    const again = await api('DELETE', `/collections/${collectionId}`, { token: user.token });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(await objectsUnder(collectionId)).toEqual([]);
    expect((await sql`select 1 from collections where id = ${collectionId}`).length).toBe(0);
    expect((await api('DELETE', `/collections/${collectionId}`, { token: user.token })).status).toBe(404);
  });
});
