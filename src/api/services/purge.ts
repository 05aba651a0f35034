import type { DocumentRepo, DocumentRow } from '#core/db/documents.ts';
import { documentFolder, namespaceFor } from '#core/namespaces.ts';
import type { ServiceDeps } from './deps.ts';

/**
 * Removes a document. Deleting a document and cancelling its job both end here. The row is marked first,
 * before anything goes: an ingest step that upserts the document's vectors reads the mark afterwards and takes
 * them back, so that no vector outlives the row (a step that upserted after the vectors went, and saw the row
 * still unmarked, would keep them for ever once the row had gone). Then vectors, files and the row, in that
 * order, so that a failure part-way leaves the marked row, unlisted and unsearched, and a retry finishes the job.
 */
export function createPurge(deps: Pick<ServiceDeps, 'store' | 'vectors'> & { documents: DocumentRepo }) {
  return async function purge(doc: Pick<DocumentRow, 'id' | 'collection_id' | 'user_id'>): Promise<void> {
    const namespace = namespaceFor(doc.collection_id, doc.user_id);
    await deps.documents.markDeleting(doc.id);
    await deps.vectors.delete(namespace, await deps.documents.vectorIds(doc.id));
    await deps.store.removeFolder(documentFolder(namespace, doc.id));
    await deps.documents.delete(doc.id);
  };
}

export type Purge = ReturnType<typeof createPurge>;
