import type { DocumentRow } from '#core/db/documents.ts';
import type { PipelineJob } from '#core/db/ingest-pipeline.ts';
import type { EndStatus } from '#core/db/job-endings.ts';
import { queueDeliveries } from '#core/messages/webhooks.ts';
import { documentFolder, namespaceFor } from '#core/namespaces.ts';
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
  const status = problems.length > 0 ? 'partial' : 'succeeded';
  const message = problems.length > 0 ? storableMessage(`Partly ingested: ${problems.join('; ')}`) : null;
  // Only the step that ended the job settles it: one cancelled meanwhile must not replace the old document.
  if (await endJob(deps, job.id, status, message)) await settleEnded(deps, { ...job, status });
}

/**
 * What follows a job's ending, safe to repeat: a step redelivered after it (a failure below, a lost
 * answer) runs this again. The document a replacement (a new version, a re-chunk) was indexed to
 * replace goes only now, so that a job cancelled or failed before this point leaves it as it was.
 * Deliveries the queue did not take are handed to it again.
 */
export async function settleEnded(
  deps: PipelineDeps,
  job: Pick<PipelineJob, 'id' | 'status' | 'replaces_document_id'> & {
    document: Pick<DocumentRow, 'id' | 'collection_id' | 'user_id'> | null;
  },
) {
  if (job.replaces_document_id && job.document && (job.status === 'succeeded' || job.status === 'partial')) {
    await removeDocument(deps, { ...job.document, id: job.replaces_document_id }, job.document.id);
  }
  await queueDeliveries(deps, await deps.deliveries.unqueuedForJob(job.id));
}

/**
 * Ends the job, if no one else has; its webhook deliveries go to the queue now, or, if that fails, when
 * settleEnded runs again. Whether this call ended it.
 */
async function endJob(deps: PipelineDeps, jobId: string, status: EndStatus, message: string | null): Promise<boolean> {
  const ending = await deps.db.finish(jobId, status, message);
  if (ending.ended) await queueDeliveries(deps, ending.deliveries);
  return ending.ended;
}

/**
 * A document's vectors, files and rows; each part may already be gone. `replacedBy` names the
 * replacement, which takes over the document's content hash as the document's row goes.
 */
async function removeDocument(
  deps: PipelineDeps,
  doc: Pick<DocumentRow, 'id' | 'collection_id' | 'user_id'>,
  replacedBy?: string,
) {
  const namespace = namespaceFor(doc.collection_id, doc.user_id);
  const ids = await deps.db.vectorIds(doc.id);
  if (ids.length > 0) await deps.vectors.delete(namespace, ids);
  await deps.store.removeFolder(documentFolder(namespace, doc.id));
  if (replacedBy) await deps.db.replaceDocument(doc.id, replacedBy);
  else await deps.db.deleteDocument(doc.id);
}

/**
 * A document deleted, or its job cancelled, while a step wrote to it: the step's writes went in after the
 * purge, so they are removed here (the embed step takes back its own vectors the same way).
 */
export async function takeBackIfGone(deps: PipelineDeps, doc: Pick<DocumentRow, 'id' | 'collection_id' | 'user_id'>) {
  if (await deps.db.documentExists(doc.id)) return false;
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
      console.error(`job ${jobId}: clean-up of document ${doc.id} failed; the row stays for a later delete:`, error);
    }
  }
  await endJob(deps, jobId, 'failed', storableMessage(message));
}
