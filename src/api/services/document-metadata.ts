import type { DocumentRepo, DocumentRow } from '#core/db/documents.ts';
import { conflict, notFound } from '#core/errors.ts';
import { namespaceFor } from '#core/namespaces.ts';
import { type DocumentMetadata, documentFacets } from '#retrieval/document-facets.ts';
import type { ServiceDeps } from './deps.ts';

/** Vectors fetched and written back per round trip: each carries its dense vector, so a page stays a few megabytes. */
const VECTORS_PER_PAGE = 200;

const STILL_INGESTING = 'The document is still being ingested or replaced; change its metadata when its job has ended';

/**
 * Replaces a document's metadata, then every one of its vectors follows: each is fetched with its values and
 * written back with the document's new facets (type, upload time, metadata). Upstash's `update` takes one id
 * per request; a fetch and an upsert take a page. The row is written first, so a failure part-way (502) leaves
 * the row right and some vectors behind, and the same PATCH finishes the job. A document still being ingested is
 * 409: its steps write vectors from the row as they read it. A deletion that begins meanwhile wins: vectors
 * written back after its mark are taken back, as the ingest worker's steps do.
 */
export function createMetadataUpdate(deps: Pick<ServiceDeps, 'vectors'> & { documents: DocumentRepo }) {
  const { documents, vectors } = deps;
  return async function updateMetadata(doc: DocumentRow, metadata: DocumentMetadata): Promise<DocumentRow> {
    if (await documents.hasWorkInProgress(doc.id)) throw conflict(STILL_INGESTING);
    const updated = await documents.setMetadata(doc.id, metadata);
    if (!updated) throw notFound('Document');
    const namespace = namespaceFor(updated.collection_id, updated.user_id);
    const facets = documentFacets(updated);
    const ids = await documents.vectorIds(updated.id);
    for (let i = 0; i < ids.length; i += VECTORS_PER_PAGE) {
      const page = await vectors.fetch(namespace, ids.slice(i, i + VECTORS_PER_PAGE));
      if (page.length === 0) continue;
      await vectors.upsert(
        namespace,
        page.map((record) => {
          // The facets are replaced whole: a key removed from the metadata goes from the vector too.
          const { doc_type: _type, uploaded_at: _uploaded, metadata: _old, ...own } = record.metadata;
          return { ...record, metadata: { ...own, ...facets } };
        }),
      );
      if ((await documents.live([updated.id])).size === 0) {
        await vectors.delete(namespace, ids);
        throw notFound('Document');
      }
    }
    return updated;
  };
}
