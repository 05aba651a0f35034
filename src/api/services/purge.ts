import type { DocumentRepo, DocumentRow } from '#core/db/documents.ts';
import { documentFolder, namespaceFor } from '#core/namespaces.ts';
import type { ServiceDeps } from './deps.ts';

/**
 * Removes a document: vectors first, then files, then rows, so that a failure part-way leaves the row
 * and a retry finishes the job. Deleting a document and cancelling its job both end here.
 */
export function createPurge(deps: Pick<ServiceDeps, 'store' | 'vectors'> & { documents: DocumentRepo }) {
  return async function purge(doc: Pick<DocumentRow, 'id' | 'collection_id' | 'user_id'>): Promise<void> {
    const namespace = namespaceFor(doc.collection_id, doc.user_id);
    await deps.vectors.delete(namespace, await deps.documents.vectorIds(doc.id));
    await deps.store.removeFolder(documentFolder(namespace, doc.id));
    await deps.documents.delete(doc.id);
  };
}

export type Purge = ReturnType<typeof createPurge>;
