import type { Caller } from '#core/caller.ts';
import { isUniqueViolation } from '#core/db/client.ts';
import type { NewDocument } from '#core/db/documents.ts';
import { documentFolder, namespaceFor } from '#core/namespaces.ts';
import type { DocumentMetadata } from '#retrieval/document-facets.ts';
import type { FilePart } from '../../uploads/multipart.ts';
import { storeOriginal } from '../../uploads/store-original.ts';
import type { Accepted, IngestDeps, Intake, Target } from './intake.ts';

/** An upload's file, with the metadata its form gave before the file (checked by the route). */
export type UploadPart = FilePart & { metadata?: DocumentMetadata };

export function createUploadIngest(deps: Pick<IngestDeps, 'store'>, intake: Intake) {
  const { store } = deps;

  /**
   * Stores the original (uploads/store-original.ts) and queues its job, unless the namespace holds the
   * same bytes already (duplicateOf): then the stored copy goes again.
   */
  async function storeUpload(caller: Caller, place: Target, file: UploadPart): Promise<Accepted> {
    const documentId = crypto.randomUUID();
    const folder = documentFolder(namespaceFor(place.collectionId, caller.id), documentId);
    const original = await storeOriginal(store, folder, file);
    try {
      const duplicate = await intake.duplicateOf(caller, place, original.sha256, file.filename);
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
        content_type: original.contentType,
        doc_type: original.type,
        size_bytes: file.size(),
        storage_path: original.key,
        chunk_size: place.chunkSize,
        content_sha256: original.sha256,
        metadata: file.metadata ?? place.inherited ?? {},
      };
      try {
        return await intake.enqueue(caller, doc, place.replaces);
      } catch (error) {
        // The same bytes arrived at the same moment (the unique index): answer as for any duplicate.
        const raced = isUniqueViolation(error, 'documents_content_idx')
          ? await intake.duplicateOf(caller, place, original.sha256, file.filename)
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
      const { queue } = intake.requireQueue();
      const place = await intake.target(caller, collectionId, replaces);
      await intake.requireQuota(caller);
      await queue.ready();
      const file = await open();
      try {
        return await storeUpload(caller, place, file);
      } finally {
        await file.settle();
      }
    },
  };
}
