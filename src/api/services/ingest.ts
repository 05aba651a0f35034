import type { Queue } from '#core/adapters/queue.ts';
import type { ObjectStore } from '#core/adapters/storage.ts';
import type { Caller } from '#core/caller.ts';
import { isUniqueViolation, isUuid } from '#core/db/client.ts';
import type { DocumentRepo, NewDocument } from '#core/db/documents.ts';
import type { QuotaRepo } from '#core/db/ingest-quota.ts';
import type { JobEnding } from '#core/db/job-endings.ts';
import { CANCELLED, type JobRepo, type JobRow, type JobStatus } from '#core/db/jobs.ts';
import type { DeliveryRepo } from '#core/db/webhook-deliveries.ts';
import { detectUploadType } from '#core/documents/detect-type.ts';
import { conflict, DomainError, forbidden, invalid, notFound, unavailable } from '#core/errors.ts';
import { quotaRefusal, secondsUntilQuotaResets } from '#core/ingest-quota.ts';
import type { Logger } from '#core/log.ts';
import { stepMessage } from '#core/messages/ingest.ts';
import { queueDeliveries } from '#core/messages/webhooks.ts';
import { documentFolder, namespaceFor } from '#core/namespaces.ts';
import type { UrlVerdict } from '#core/urls/url-policy.ts';
import { DEFAULT_CONFIG } from '#retrieval/config.ts';
import type { DocumentMetadata } from '#retrieval/document-facets.ts';
import { uploadTooLarge } from '../uploads/errors.ts';
import type { FilePart } from '../uploads/multipart.ts';
import { peek, sha256Passing, TooLarge } from '../uploads/streams.ts';
import type { AccessService } from './access.ts';
import type { Audit } from './audit.ts';
import type { Purge } from './purge.ts';

const SNIFF_BYTES = 64 * 1024;
const STILL_REPLACED = 'The document is still being ingested or replaced; try again when its job has ended';
const SAME_AS_REPLACED = 'This file is identical to the document it would replace: there is nothing to replace';
const HELD_ELSEWHERE = (id: string) =>
  `This file is identical to another document here (${id}), and the same bytes are one document: nothing was replaced`;

export interface IngestDeps {
  access: AccessService;
  audit: Audit;
  documents: DocumentRepo;
  jobs: JobRepo;
  /** Webhook deliveries, which a job's ending (a cancellation, a duplicate) hands to the queue. */
  deliveries: DeliveryRepo;
  /** Removes a cancelled job's document with its vectors and files. */
  purge: Purge;
  /** Chunks made today per user, against `chunksPerDay`. */
  quota: QuotaRepo;
  chunksPerDay: number;
  store: ObjectStore;
  /** Null when ingestion is disabled (no queue configured). */
  queue: Queue | null;
  workerUrl: string | null;
  checkUrl: (url: string) => Promise<UrlVerdict>;
  log: Logger;
}

/** Where a document goes: a collection or the personal space, its chunk size, and the document it replaces. */
interface Target {
  collectionId: string | null;
  chunkSize: number;
  replaces?: string;
  /** The replaced document's metadata, which a new version given none keeps. */
  inherited?: DocumentMetadata;
}

/** An upload's file, with the metadata its form gave before the file (checked by the route). */
export type UploadPart = FilePart & { metadata?: DocumentMetadata };

/** What an ingest request answers: the job to watch, its document, and whether the bytes were already there. */
export interface Accepted {
  job_id: string;
  document_id: string;
  duplicate: boolean;
}

export function createIngestService(deps: IngestDeps) {
  const { access, audit, documents, jobs, store, purge } = deps;

  function requireQueue(): { queue: Queue; workerUrl: string } {
    if (!deps.queue || !deps.workerUrl) throw unavailable('Ingestion is disabled on this deployment');
    return { queue: deps.queue, workerUrl: deps.workerUrl };
  }

  /**
   * Owner, or a member holding `ingest`; without a collection, the caller's personal space. A new
   * version (`replaces`) needs what deleting needs: the document's owner, and nothing else at work on it.
   */
  async function target(caller: Caller, collectionId: string | undefined, replaces?: string): Promise<Target> {
    let target: Target;
    if (!collectionId) {
      access.requireUnrestricted(caller);
      target = { collectionId: null, chunkSize: DEFAULT_CONFIG.chunk_size };
    } else {
      const { collection, role, permission } = await access.requireParticipant(caller, collectionId);
      if (role !== 'owner' && permission !== 'ingest') {
        throw forbidden('Adding documents needs the ingest permission on this collection');
      }
      if (replaces && role !== 'owner') throw forbidden('Only the collection owner can replace a document');
      target = { collectionId: collection.id, chunkSize: Number(collection.config.chunk_size ?? DEFAULT_CONFIG.chunk_size) };
    }
    if (!replaces) return target;
    const old = isUuid(replaces)
      ? target.collectionId
        ? await documents.findInCollection(target.collectionId, replaces)
        : await documents.findPersonal(caller.id, replaces)
      : undefined;
    // One being deleted is gone already.
    if (!old || old.deleting_at) throw notFound('Document to replace');
    if (await documents.hasWorkInProgress(old.id)) throw conflict(STILL_REPLACED);
    return { ...target, replaces: old.id, inherited: old.metadata };
  }

  /**
   * A job's ending made webhook deliveries: they go to the queue now. If the queue cannot take them the
   * request still succeeds (the job has ended); the ingest worker's sweep queues them within minutes.
   */
  async function deliver(ending: JobEnding) {
    if (!ending.ended || !deps.queue || !deps.workerUrl) return;
    const queue = { queue: deps.queue, workerUrl: deps.workerUrl, deliveries: deps.deliveries };
    await queueDeliveries(queue, ending.deliveries).catch((error: unknown) =>
      deps.log.error('webhook_deliveries_not_queued', error, { left_for: 'sweep' }),
    );
  }

  /**
   * What an upload of bytes the namespace already holds gets: no second document. The caller's own job
   * still at work on them is answered again; a job already ended gives the caller a new job, ended the same
   * way at once (with its webhooks). Another user's upload still at work on them is a 409: try again later.
   */
  async function duplicateOf(caller: Caller, place: Target, sha256: string, source: string): Promise<Accepted | undefined> {
    const existing = await documents.findByContent(place.collectionId, caller.id, sha256);
    if (!existing) return undefined;
    const made = existing.job;
    // What a failed job could not clean up (an outage during its clean-up): it goes now, and these bytes are ingested afresh.
    if (made?.status === 'failed') {
      await purge(existing);
      return undefined;
    }
    // A new version the namespace already holds would replace nothing (the same bytes stay one document): said
    // plainly rather than answered as a success that left the old version in place.
    if (place.replaces) throw conflict(existing.id === place.replaces ? SAME_AS_REPLACED : HELD_ELSEWHERE(existing.id));
    if (made && (made.status === 'queued' || made.status === 'processing')) {
      if (made.user_id !== caller.id) {
        throw conflict('The same file is being ingested here by someone else right now; try again when that has finished');
      }
      return { job_id: made.id, document_id: existing.id, duplicate: true };
    }
    const jobId = crypto.randomUUID();
    const ending = await jobs.insertEnded(
      {
        id: jobId,
        user_id: caller.id,
        collection_id: place.collectionId,
        document_id: existing.id,
        source,
        api_key_id: caller.key?.id ?? null,
      },
      // The job that made it succeeded, or ended partial (saying what was lost), or is gone with its user.
      made?.status === 'partial'
        ? { status: 'partial', errorMessage: made.error_message, chunks: existing.chunk_count }
        : { status: 'succeeded', errorMessage: null, chunks: existing.chunk_count },
    );
    await deliver(ending);
    return { job_id: jobId, document_id: existing.id, duplicate: true };
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
  async function enqueue(caller: Caller, doc: NewDocument, replaces?: string): Promise<Accepted> {
    const { queue, workerUrl } = requireQueue();
    const jobId = crypto.randomUUID();
    await jobs
      .insertWithDocument(doc, {
        id: jobId,
        user_id: caller.id,
        collection_id: doc.collection_id,
        source: doc.source_url ?? doc.name,
        // Its usage rows carry the key, as an answer's do; a re-chunk's too when a key asked for it.
        api_key_id: caller.key?.id ?? null,
        ...(replaces ? { replaces_document_id: replaces } : {}),
      })
      .catch((error: unknown) => {
        // Another new version of it was accepted in the meantime (the check in `target` ran before either job existed).
        if (isUniqueViolation(error, 'ingest_jobs_replacing_idx')) throw conflict(STILL_REPLACED);
        throw error;
      });
    // A collection whose deletion began since `target` looked may have removed its folder before this file was
    // stored there: the rows go again (the callers remove the file), rather than leave it behind once the
    // collection's rows cascade.
    if (doc.collection_id && (await documents.live([doc.id])).size === 0) {
      await jobs.delete(jobId);
      await documents.delete(doc.id);
      throw notFound('Collection');
    }
    try {
      await queue.publish([stepMessage(workerUrl, { job_id: jobId, step: 'extract' }, caller.id)]);
    } catch (error) {
      await jobs.delete(jobId);
      await documents.delete(doc.id);
      throw error;
    }
    return { job_id: jobId, document_id: doc.id, duplicate: false };
  }

  /**
   * Sniffs the type, stores the original while hashing it, and queues its job, unless the namespace holds
   * the same bytes already (duplicateOf). The file's limits end it with a 413.
   */
  async function storeUpload(caller: Caller, place: Target, file: UploadPart): Promise<Accepted> {
    const { head, complete, stream } = await peek(file.body, SNIFF_BYTES).catch(rethrowTooLarge);
    const detected = detectUploadType(file.filename, head, complete);
    if (!detected.ok) throw new DomainError('unsupported_type', detected.reason);

    const documentId = crypto.randomUUID();
    const folder = documentFolder(namespaceFor(place.collectionId, caller.id), documentId);
    const key = `${folder}/original.${detected.type}`;
    const hashed = sha256Passing(stream);
    try {
      await store.put(key, hashed.stream, detected.contentType);
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
    const sha256 = await hashed.sha256();
    try {
      const duplicate = await duplicateOf(caller, place, sha256, file.filename);
      if (duplicate) {
        await store.removeFolder(folder);
        return duplicate;
      }
      const doc: NewDocument = {
        id: documentId,
        collection_id: place.collectionId,
        user_id: caller.id,
        name: file.filename,
        source_kind: 'upload',
        source_url: null,
        content_type: detected.contentType,
        doc_type: detected.type,
        size_bytes: file.size(),
        storage_path: key,
        chunk_size: place.chunkSize,
        content_sha256: sha256,
        metadata: file.metadata ?? place.inherited ?? {},
      };
      try {
        return await enqueue(caller, doc, place.replaces);
      } catch (error) {
        // The same bytes arrived at the same moment (the unique index): answer as for any duplicate.
        const raced = isUniqueViolation(error, 'documents_content_idx')
          ? await duplicateOf(caller, place, sha256, file.filename)
          : undefined;
        if (!raced) throw error;
        await store.removeFolder(folder);
        return raced;
      }
    } catch (error) {
      await store.removeFolder(folder).catch(() => {});
      throw error;
    }
  }

  return {
    /**
     * Everything that can refuse an upload without its body (the queue, the caller's permission, the
     * document to replace) is decided before `open` reads it.
     */
    async uploadFile(
      caller: Caller,
      collectionId: string | undefined,
      open: () => Promise<UploadPart>,
      replaces?: string,
    ): Promise<Accepted> {
      const { queue } = requireQueue();
      const place = await target(caller, collectionId, replaces);
      await requireQuota(caller);
      await queue.ready();
      const file = await open();
      try {
        return await storeUpload(caller, place, file);
      } finally {
        await file.settle();
      }
    },

    /** A web page is fetched by the worker, so its bytes are not known here: URLs are never duplicates. */
    async ingestUrl(
      caller: Caller,
      collectionId: string | undefined,
      url: string,
      replaces?: string,
      metadata?: DocumentMetadata,
    ): Promise<Accepted> {
      requireQueue();
      const place = await target(caller, collectionId, replaces);
      await requireQuota(caller);
      const verdict = await deps.checkUrl(url);
      if (!verdict.ok) throw invalid('url', verdict.reason, 'url_refused');
      const href = verdict.url.href;
      return enqueue(
        caller,
        {
          id: crypto.randomUUID(),
          collection_id: place.collectionId,
          user_id: caller.id,
          name: href,
          source_kind: 'url',
          source_url: href,
          // Known once the worker has fetched it.
          content_type: 'text/html',
          doc_type: null,
          size_bytes: 0,
          storage_path: null,
          chunk_size: place.chunkSize,
          metadata: metadata ?? place.inherited ?? {},
        },
        place.replaces,
      );
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
          // The copy's hash is taken over from the document it replaces once that one is gone (the unique index).
          const { job_id } = await enqueue(
            caller,
            { ...fields, id, storage_path: key, chunk_size: chunkSize, content_sha256: null },
            doc.id,
          );
          started.push({ job_id, document_id: doc.id, source: doc.source_url ?? doc.name });
        } catch (error) {
          await store.removeFolder(folder).catch(() => {});
          // A new version of it was accepted since the list was read: that one replaces it; leave it be.
          if (error instanceof DomainError && error.kind === 'conflict') continue;
          throw error;
        }
      }
      await audit(
        caller,
        'collection.rechunked',
        { type: 'collection', id: collection.id, collectionId: collection.id },
        { chunk_size: chunkSize, documents: started.length },
      );
      return started;
    },

    async getJob(caller: Caller, jobId: string): Promise<JobRow> {
      return ownJob(caller, jobId);
    },

    /**
     * The caller's own jobs, newest first: all, one collection's, or (collectionId null) the personal
     * namespace's. A key restricted to a collection sees that collection's only.
     */
    async listJobs(
      caller: Caller,
      filter: { collectionId?: string | null; status?: JobStatus; limit: number; offset: number },
    ): Promise<JobRow[]> {
      const restriction = caller.key?.collectionId;
      if (restriction && filter.collectionId !== undefined && filter.collectionId?.toLowerCase() !== restriction) {
        access.requireUnrestricted(caller);
      }
      const collectionId = restriction ?? filter.collectionId;
      if (collectionId && !isUuid(collectionId)) return [];
      return jobs.list(caller.id, { ...filter, collectionId });
    },

    /**
     * Stops the creator's job: it ends `failed`, "Cancelled", at once (with its webhooks), so no later step
     * does anything; then its document goes with whatever was indexed and stored. A step already running
     * takes back what it writes after this (the ingest worker's takeBackIfGone). A document it was to
     * replace stays. Cancelling again answers the same; a job that ended otherwise is 409, and so is a new
     * version already replacing the old document (it ends in a moment).
     */
    async cancel(caller: Caller, jobId: string): Promise<JobRow> {
      const job = await ownJob(caller, jobId);
      const ending = await jobs.cancel(job.job_id, caller.id);
      const now = await ownJob(caller, jobId);
      if (!ending.ended && !(now.status === 'failed' && now.error_message === CANCELLED)) {
        throw conflict(
          now.status === 'processing'
            ? 'The job is replacing the document it is a new version of, and can no longer be cancelled'
            : `The job has already ended (${now.status})`,
        );
      }
      await deliver(ending);
      // Again on a repeated cancel: a purge that failed (an outage) is finished by cancelling again.
      const doc = job.document_id ? await documents.find(job.document_id) : undefined;
      if (doc) await purge(doc);
      return { ...now, document_id: null };
    },
  };

  /** Only the creator sees a job; a restricted key sees only its collection's jobs. */
  async function ownJob(caller: Caller, jobId: string): Promise<JobRow> {
    const job = isUuid(jobId) ? await jobs.findOwn(jobId, caller.id) : undefined;
    if (!job) throw notFound('Job');
    if (!access.keyAllows(caller, job.collection_id)) access.requireUnrestricted(caller);
    return job;
  }
}

function rethrowTooLarge(error: unknown): never {
  if (error instanceof TooLarge) throw uploadTooLarge();
  throw error;
}

export type IngestService = ReturnType<typeof createIngestService>;
