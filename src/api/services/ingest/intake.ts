import type { Queue } from '#core/adapters/queue.ts';
import type { ObjectStore } from '#core/adapters/storage.ts';
import type { Caller } from '#core/caller.ts';
import { isUniqueViolation, isUuid } from '#core/db/client.ts';
import type { DocumentRepo, NewDocument } from '#core/db/documents.ts';
import type { QuotaRepo } from '#core/db/ingest-quota.ts';
import type { JobEnding } from '#core/db/job-endings.ts';
import type { JobRepo } from '#core/db/jobs.ts';
import type { DeliveryRepo } from '#core/db/webhook-deliveries.ts';
import { conflict, DomainError, forbidden, notFound, unavailable } from '#core/errors.ts';
import { quotaRefusal, secondsUntilQuotaResets } from '#core/ingest-quota.ts';
import type { Logger } from '#core/log.ts';
import { stepMessage } from '#core/messages/ingest.ts';
import type { UrlVerdict } from '#core/urls/url-policy.ts';
import { queueDeliveries } from '#core/webhooks/queue.ts';
import { DEFAULT_CONFIG } from '#retrieval/config.ts';
import type { DocumentMetadata } from '#retrieval/document-facets.ts';
import type { AccessService } from '../access.ts';
import type { Audit } from '../audit.ts';
import type { Purge } from '../purge.ts';

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
export interface Target {
  collectionId: string | null;
  chunkSize: number;
  replaces?: string;
  /** The replaced document's metadata, which a new version given none keeps. */
  inherited?: DocumentMetadata;
}

/** What an ingest request answers: the job to watch, its document, and whether the bytes were already there. */
export interface Accepted {
  job_id: string;
  document_id: string;
  duplicate: boolean;
}

/** The rules every way in shares (an upload, a URL, a re-chunk, a cancellation): where, how much, and the job's rows. */
export function createIntake(deps: IngestDeps) {
  const { access, documents, jobs, purge } = deps;

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

  return { requireQueue, target, deliver, duplicateOf, requireQuota, enqueue };
}

export type Intake = ReturnType<typeof createIntake>;
