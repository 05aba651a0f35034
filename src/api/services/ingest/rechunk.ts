import type { Caller } from '#core/caller.ts';
import { DomainError } from '#core/errors.ts';
import { documentFolder, namespaceFor } from '#core/namespaces.ts';
import { DEFAULT_CONFIG } from '#retrieval/config.ts';
import type { IngestDeps, Intake } from './intake.ts';

export function createRechunk(deps: Pick<IngestDeps, 'access' | 'audit' | 'documents' | 'store'>, intake: Intake) {
  const { access, audit, documents, store } = deps;
  return {
    /**
     * Re-chunks the collection's documents cut at another chunk size than its current one: each stored
     * original is copied and ingested again as a new document, whose job the caller can watch. The old
     * document stays searchable until the new one is indexed, then goes (the ingest worker's finish step);
     * if the new one fails, the old one stays as it was. Documents with work in progress are left for a
     * later call, so calling again starts only what is not started. Not counted against the daily quota:
     * it makes nothing new. Admin only, as the config that sets `chunk_size` is.
     */
    async rechunk(caller: Caller, collectionId: string): Promise<{ job_id: string; document_id: string; source: string }[]> {
      const { queue } = intake.requireQueue();
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
          const { job_id } = await intake.enqueue(
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
  };
}
