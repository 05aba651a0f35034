import type { Queue } from '#core/adapters/queue.ts';
import type { ObjectStore } from '#core/adapters/storage.ts';
import { isUuid } from '#core/db/client.ts';
import type { DocumentRepo, NewDocument } from '#core/db/documents.ts';
import type { QuotaRepo } from '#core/db/ingest-quota.ts';
import type { JobRepo, JobRow } from '#core/db/jobs.ts';
import { detectUploadType } from '#core/documents/detect-type.ts';
import { DomainError, forbidden, invalid, notFound, unavailable } from '#core/errors.ts';
import { quotaRefusal, secondsUntilQuotaResets } from '#core/ingest-quota.ts';
import { stepMessage } from '#core/messages/ingest.ts';
import { documentFolder, namespaceFor } from '#core/namespaces.ts';
import type { UrlVerdict } from '#core/urls/url-policy.ts';
import type { Caller } from '../auth/caller.ts';
import { uploadTooLarge } from '../uploads/errors.ts';
import type { FilePart } from '../uploads/multipart.ts';
import { peek, TooLarge } from '../uploads/streams.ts';
import type { AccessService } from './access.ts';
import { DEFAULT_CONFIG } from './collections.ts';

const SNIFF_BYTES = 64 * 1024;

export interface IngestDeps {
  access: AccessService;
  documents: DocumentRepo;
  jobs: JobRepo;
  /** Chunks made today per user, against `chunksPerDay`. */
  quota: QuotaRepo;
  chunksPerDay: number;
  store: ObjectStore;
  /** Null when ingestion is disabled (no queue configured). */
  queue: Queue | null;
  workerUrl: string | null;
  checkUrl: (url: string) => Promise<UrlVerdict>;
}

export function createIngestService(deps: IngestDeps) {
  const { access, documents, jobs, store } = deps;

  function requireQueue(): { queue: Queue; workerUrl: string } {
    if (!deps.queue || !deps.workerUrl) throw unavailable('Ingestion is disabled on this deployment');
    return { queue: deps.queue, workerUrl: deps.workerUrl };
  }

  /** Owner, or a member holding `ingest`; without a collection, the caller's personal space. */
  async function target(caller: Caller, collectionId: string | undefined) {
    if (!collectionId) return { collectionId: null, chunkSize: DEFAULT_CONFIG.chunk_size };
    const { collection, role, permission } = await access.requireParticipant(caller, collectionId);
    if (role !== 'owner' && permission !== 'ingest') {
      throw forbidden('Adding documents needs the ingest permission on this collection');
    }
    const chunkSize = Number(collection.config.chunk_size ?? DEFAULT_CONFIG.chunk_size);
    return { collectionId: collection.id, chunkSize };
  }

  /**
   * Refuses new work once today's chunks are used up. A document accepted while some quota is
   * left keeps what fits, and ends `partial` saying so (the ingest worker reserves per range).
   */
  async function requireQuota(caller: Caller) {
    if ((await deps.quota.usedToday(caller.id)) < deps.chunksPerDay) return;
    throw new DomainError('quota_exceeded', quotaRefusal(deps.chunksPerDay), { retryAfter: secondsUntilQuotaResets() });
  }

  /** Rows, then the message; if the message cannot be queued, the rows go again. */
  async function enqueue(caller: Caller, doc: NewDocument, replaces?: string): Promise<string> {
    const { queue, workerUrl } = requireQueue();
    const jobId = crypto.randomUUID();
    await jobs.insertWithDocument(doc, {
      id: jobId,
      user_id: caller.id,
      collection_id: doc.collection_id,
      source: doc.source_url ?? doc.name,
      ...(replaces ? { replaces_document_id: replaces } : {}),
    });
    try {
      await queue.publish([stepMessage(workerUrl, { job_id: jobId, step: 'extract' })]);
    } catch (error) {
      await jobs.delete(jobId);
      await documents.delete(doc.id);
      throw error;
    }
    return jobId;
  }

  /** Sniffs the type, stores the original and queues its job; the file's limits end it with a 413. */
  async function storeUpload(
    caller: Caller,
    { collectionId, chunkSize }: { collectionId: string | null; chunkSize: number },
    file: FilePart,
  ): Promise<string> {
    const { head, complete, stream } = await peek(file.body, SNIFF_BYTES).catch(rethrowTooLarge);
    const detected = detectUploadType(file.filename, head, complete);
    if (!detected.ok) throw new DomainError('unsupported_type', detected.reason);

    const documentId = crypto.randomUUID();
    const folder = documentFolder(namespaceFor(collectionId, caller.id), documentId);
    const key = `${folder}/original.${detected.type}`;
    try {
      await store.put(key, stream, detected.contentType);
    } catch (error) {
      // A partial object may exist if the store accepted some bytes.
      await store.removeFolder(folder).catch(() => {});
      // The limit's own error may reach us wrapped by the store, or not at all.
      if (error instanceof TooLarge || file.tooLarge()) throw uploadTooLarge();
      throw error;
    }
    // A body cut short by the limit can still look complete to the store.
    if (file.tooLarge()) {
      await store.removeFolder(folder);
      throw uploadTooLarge();
    }
    try {
      return await enqueue(caller, {
        id: documentId,
        collection_id: collectionId,
        user_id: caller.id,
        name: file.filename,
        source_kind: 'upload',
        source_url: null,
        content_type: detected.contentType,
        doc_type: detected.type,
        size_bytes: file.size(),
        storage_path: key,
        chunk_size: chunkSize,
      });
    } catch (error) {
      await store.removeFolder(folder).catch(() => {});
      throw error;
    }
  }

  return {
    /**
     * Everything that can refuse an upload without its body (the queue, the caller's permission)
     * is decided before `open` reads it.
     */
    async uploadFile(caller: Caller, collectionId: string | undefined, open: () => Promise<FilePart>): Promise<string> {
      const { queue } = requireQueue();
      const { collectionId: cid, chunkSize } = await target(caller, collectionId);
      await requireQuota(caller);
      await queue.ready();
      const file = await open();
      try {
        return await storeUpload(caller, { collectionId: cid, chunkSize }, file);
      } finally {
        await file.settle();
      }
    },

    async ingestUrl(caller: Caller, collectionId: string | undefined, url: string): Promise<string> {
      requireQueue();
      const { collectionId: cid, chunkSize } = await target(caller, collectionId);
      await requireQuota(caller);
      const verdict = await deps.checkUrl(url);
      if (!verdict.ok) throw invalid('url', verdict.reason, 'url_refused');
      const href = verdict.url.href;
      return enqueue(caller, {
        id: crypto.randomUUID(),
        collection_id: cid,
        user_id: caller.id,
        name: href,
        source_kind: 'url',
        source_url: href,
        // Known once the worker has fetched it.
        content_type: 'text/html',
        doc_type: null,
        size_bytes: 0,
        storage_path: null,
        chunk_size: chunkSize,
      });
    },

    /**
     * Re-chunks the collection's documents cut at another chunk size than its current one: each stored
     * original is copied and ingested again as a new document, whose job the caller can watch. The old
     * document stays searchable until the new one is indexed, then goes (the ingest worker's finish step);
     * if the new one fails, the old one stays as it was. Documents with work in progress are left for a
     * later call, so calling again starts only what is not started. Not counted against the daily quota:
     * it makes nothing new. Admin only, as the config that sets `chunk_size` is.
     */
    async rechunk(caller: Caller, collectionId: string): Promise<{ job_id: string; document_id: string; source: string }[]> {
      const { queue } = requireQueue();
      const collection = await access.requireAdmin(caller, collectionId);
      const chunkSize = Number(collection.config.chunk_size ?? DEFAULT_CONFIG.chunk_size);
      await queue.ready();
      const started = [];
      for (const doc of await documents.listToRechunk(collection.id, chunkSize)) {
        const id = crypto.randomUUID();
        const folder = documentFolder(namespaceFor(doc.collection_id, doc.user_id), id);
        const key = `${folder}/original.${doc.doc_type}`;
        await store.copy(doc.storage_path as string, key);
        try {
          const { chunk_count: _count, ...fields } = doc;
          const jobId = await enqueue(caller, { ...fields, id, storage_path: key, chunk_size: chunkSize }, doc.id);
          started.push({ job_id: jobId, document_id: doc.id, source: doc.source_url ?? doc.name });
        } catch (error) {
          await store.removeFolder(folder).catch(() => {});
          throw error;
        }
      }
      return started;
    },

    async getJob(caller: Caller, jobId: string): Promise<JobRow> {
      const job = isUuid(jobId) ? await jobs.findOwn(jobId, caller.id) : undefined;
      if (!job) throw notFound('Job');
      return job;
    },
  };
}

function rethrowTooLarge(error: unknown): never {
  if (error instanceof TooLarge) throw uploadTooLarge();
  throw error;
}

export type IngestService = ReturnType<typeof createIngestService>;
