import type { DocumentRow } from '#core/db/documents.ts';
import type { PipelineJob } from '#core/db/ingest-pipeline.ts';
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
  // A re-chunk's new document is indexed: the one it replaces goes first, so that a failure here is retried
  // with the job still open, and both are never left searchable.
  if (job.replaces_document_id) {
    await removeDocument(deps, { ...job.document, id: job.replaces_document_id });
  }
  if (problems.length > 0) await deps.db.finish(job.id, 'partial', storableMessage(`Partly ingested: ${problems.join('; ')}`));
  else await deps.db.finish(job.id, 'succeeded', null);
}

/** A document's vectors, files and rows; each part may already be gone. */
async function removeDocument(deps: PipelineDeps, doc: Pick<DocumentRow, 'id' | 'collection_id' | 'user_id'>) {
  const namespace = namespaceFor(doc.collection_id, doc.user_id);
  const ids = await deps.db.vectorIds(doc.id);
  if (ids.length > 0) await deps.vectors.delete(namespace, ids);
  await deps.store.removeFolder(documentFolder(namespace, doc.id));
  await deps.db.deleteDocument(doc.id);
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
  await deps.db.finish(jobId, 'failed', storableMessage(message));
}
