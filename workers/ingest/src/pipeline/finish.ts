import type { DocumentRow } from '#core/db/documents.ts';
import type { PipelineJob } from '#core/db/ingest-pipeline.ts';
import type { EndStatus } from '#core/db/job-endings.ts';
import { documentFolder, namespaceFor } from '#core/namespaces.ts';
import { queueDeliveries } from '#core/webhooks/queue.ts';
import type { PipelineDeps } from './deps.ts';
import { storableMessage } from './job-messages.ts';

/**
 * Step 3, run by whichever batch leaves nothing pending. The terminal update is
 * conditional, so of two batches finishing together exactly one decides.
 */
export async function finishIfComplete(deps: PipelineDeps, job: PipelineJob & { document: DocumentRow }) {
  const progress = await deps.db.refreshProgress(job.id, job.document.id);
  // Pages still to be read, or chunks still to be indexed: another step finishes.
  if (progress.pending > 0 || !progress.extracted) return;

  const problems = [...progress.warnings];
  if (progress.failed > 0) {
    problems.unshift(`${progress.failed} of ${progress.total} chunks failed (${progress.errors.join('; ')})`);
  }
  if (progress.indexed === 0) {
    await failJob(
      deps,
      job.id,
      job.document,
      progress.failed > 0 ? `Nothing could be indexed: ${problems.join('; ')}` : 'The document has no text that could be indexed',
    );
    return;
  }
  // A new version (an upload, a re-chunk) replaces the old document before it ends, so that its job says
  // `succeeded` only once the old one is gone. Claimed first: a cancelled job replaces nothing, and one that
  // is replacing can no longer be cancelled. A failure part-way is retried, and claims again.
  if (job.replaces_document_id) {
    if (!(await deps.db.claimFinish(job.id))) return;
    await removeDocument(deps, { ...job.document, id: job.replaces_document_id }, job.document.id);
  }
  const status = problems.length > 0 ? 'partial' : 'succeeded';
  await endJob(deps, job.id, status, problems.length > 0 ? storableMessage(`Partly ingested: ${problems.join('; ')}`) : null);
}

/**
 * A step delivered after its job ended (a redelivery, a batch still queued): the ending's webhook deliveries
 * that the queue did not take are handed to it again.
 */
export async function settleEnded(deps: PipelineDeps, job: Pick<PipelineJob, 'id'>) {
  await queueDeliveries(deps, await deps.deliveries.unqueuedForJob(job.id));
}

/** Ends the job, if no one else has; its webhook deliveries go to the queue now, or, if that fails, when settleEnded runs. */
async function endJob(deps: PipelineDeps, jobId: string, status: EndStatus, message: string | null) {
  const ending = await deps.db.finish(jobId, status, message);
  if (ending.ended) await queueDeliveries(deps, ending.deliveries);
}

/**
 * A document's vectors, files and rows; each part may already be gone. `replacedBy` names the
 * replacement, which takes over the document's content hash as the document's row goes.
 */
export async function removeDocument(
  deps: PipelineDeps,
  doc: Pick<DocumentRow, 'id' | 'collection_id' | 'user_id'>,
  replacedBy?: string,
) {
  const namespace = namespaceFor(doc.collection_id, doc.user_id);
  // Marked first, as the API's purge does, so that a batch of the same job still in flight takes back what it
  // upserts. A document being replaced has nothing in flight, and keeps its content hash for its replacement.
  if (!replacedBy) await deps.db.markDeleting(doc.id);
  const ids = await deps.db.vectorIds(doc.id);
  if (ids.length > 0) await deps.vectors.delete(namespace, ids);
  await deps.store.removeFolder(documentFolder(namespace, doc.id));
  if (replacedBy) await deps.db.replaceDocument(doc.id, replacedBy);
  else await deps.db.deleteDocument(doc.id);
}

/**
 * A document deleted (or being deleted), or its job cancelled, while a step wrote to it: the step's writes may
 * have gone in after the purge removed the files, so they are removed here (the embed step takes back its own
 * vectors the same way).
 */
export async function takeBackIfGone(deps: PipelineDeps, doc: Pick<DocumentRow, 'id' | 'collection_id' | 'user_id'>) {
  if (await deps.db.documentLive(doc.id)) return false;
  await deps.store.removeFolder(documentFolder(namespaceFor(doc.collection_id, doc.user_id), doc.id));
  return true;
}

/**
 * A failed job leaves nothing behind but itself: its document, files and vectors go.
 * If a service is down so that the clean-up itself fails, the job still ends as failed
 * and the document row stays, pointing at what is left, for a later DELETE to purge.
 */
export async function failJob(deps: PipelineDeps, jobId: string, doc: DocumentRow | null, message: string) {
  if (doc) {
    try {
      await removeDocument(deps, doc);
    } catch (error) {
      deps.log.error('cleanup_failed', error, { job_id: jobId, document_id: doc.id });
    }
  }
  await endJob(deps, jobId, 'failed', storableMessage(message));
}
