import type { Caller } from '#core/caller.ts';
import { isUuid } from '#core/db/client.ts';
import type { DocumentRow, StoredChunk } from '#core/db/documents.ts';
import { notFound } from '#core/errors.ts';
import { type DocumentMetadata, documentFacets } from '#retrieval/document-facets.ts';
import { type FilterNode, matchesFilter } from '#retrieval/filter.ts';
import { locationOf, vectorMetadata } from '#retrieval/vector-metadata.ts';
import type { ServiceDeps } from './deps.ts';
import { createMetadataUpdate } from './document-metadata.ts';
import type { Purge } from './purge.ts';

/** Signed links to originals are short-lived: clients fetch them on demand. */
export const OPEN_URL_SECONDS = 3600;

/** A chunk as a citation shows it: where it sits in its document, as a search's source says. */
export interface ShownPassage {
  chunk_index: number;
  chunk_type: StoredChunk['chunk_type'];
  text: string;
  page: number | string | null;
  heading: string | null;
  image_url: string | null;
}

export interface ListedDocument {
  id: string;
  name: string;
  source_kind: DocumentRow['source_kind'];
  content_type: string;
  size_bytes: number;
  chunk_count: number;
  created_at: string;
  open_url: string | null;
  type: string | null;
  metadata: DocumentMetadata;
  title: string | null;
  document_date: string | null;
  source_id: string | null;
  last_fetched_at: string | null;
  last_changed_at: string | null;
}

export function createDocumentService(
  deps: Pick<ServiceDeps, 'access' | 'audit' | 'documents' | 'store' | 'vectors'> & { purge: Purge },
) {
  const { access, audit, documents, store, purge } = deps;
  const updateMetadata = createMetadataUpdate(deps);

  /** Rows as clients see them, each upload with a fresh signed link. */
  async function present(rows: DocumentRow[]): Promise<ListedDocument[]> {
    // Web pages open at their URL; only uploads get a signed link.
    const keys = rows.flatMap((row) => (row.storage_path && !row.source_url ? [row.storage_path] : []));
    const signed = await store.signedUrls(keys, OPEN_URL_SECONDS);
    return rows.map((row) => ({
      id: row.id,
      name: row.name,
      source_kind: row.source_kind,
      content_type: row.content_type,
      size_bytes: Number(row.size_bytes),
      chunk_count: row.chunk_count,
      created_at: row.created_at,
      open_url: row.source_url ?? (row.storage_path ? (signed.get(row.storage_path) ?? null) : null),
      type: row.doc_type,
      metadata: row.metadata ?? {},
      title: row.title,
      document_date: row.document_date,
      source_id: row.source_id ?? null,
      last_fetched_at: row.fetched_at ?? null,
      last_changed_at: row.changed_at ?? null,
    }));
  }

  /**
   * The rows a filter selects, with the search filter's semantics (matchesFilter on the fields a vector carries),
   * then the page of them: filtered here rather than in SQL, so that listing and search cannot disagree.
   */
  function filtered(all: DocumentRow[], filter: FilterNode, page?: { limit: number | null; offset: number }) {
    const matching = all.filter((row) =>
      matchesFilter(filter, { document_id: row.id, source: row.name, ...documentFacets(row) }),
    );
    return page ? matching.slice(page.offset, page.limit === null ? undefined : page.offset + page.limit) : matching;
  }

  /** The chunks from index - around to index + around; 404 when the cited one is not indexed. */
  async function window(doc: DocumentRow, index: number, around: number) {
    const rows = await documents.chunksBetween(doc.id, Math.max(0, index - around), index + around);
    if (!rows.some((row) => row.chunk_index === index)) throw notFound('Passage');
    const images = await store.signedUrls(
      rows.flatMap((row) => (row.image_path ? [row.image_path] : [])),
      OPEN_URL_SECONDS,
    );
    const [document] = await present([doc]);
    const facets = documentFacets(doc);
    const passages: ShownPassage[] = rows.map((row) => {
      const { page, heading } = locationOf(vectorMetadata(doc.id, doc.name, row, facets));
      return {
        chunk_index: row.chunk_index,
        chunk_type: row.chunk_type,
        text: row.text ?? '',
        page,
        heading,
        image_url: row.image_path ? (images.get(row.image_path) ?? null) : null,
      };
    });
    return { document: document as ListedDocument, chunk_index: index, passages };
  }

  return {
    /**
     * A cited passage with its neighbours, for a reader to see it in place: to whoever may search the
     * collection (owner or member, and a key restricted to it), as search is.
     */
    async passages(caller: Caller, collectionId: string, documentId: string, index: number, around: number) {
      await access.requireParticipant(caller, collectionId);
      const doc = isUuid(documentId) ? await documents.findInCollection(collectionId, documentId) : undefined;
      if (!doc || doc.deleting_at) throw notFound('Document');
      return window(doc, index, around);
    },

    async personalPassages(caller: Caller, documentId: string, index: number, around: number) {
      access.requireUnrestricted(caller);
      const doc = isUuid(documentId) ? await documents.findPersonal(caller.id, documentId) : undefined;
      if (!doc || doc.deleting_at) throw notFound('Document');
      return window(doc, index, around);
    },

    /** Every document, or a page of them when `page` is given. */
    async list(
      caller: Caller,
      collectionId: string,
      page?: { limit: number | null; offset: number },
      filter?: FilterNode,
    ): Promise<ListedDocument[]> {
      await access.requireParticipant(caller, collectionId);
      if (filter) return present(await filtered(await documents.listForCollection(collectionId), filter, page));
      return present(await documents.listForCollection(collectionId, page));
    },

    /** The caller's personal namespace: only its owner sees or deletes these. */
    async listPersonal(caller: Caller, filter?: FilterNode): Promise<ListedDocument[]> {
      access.requireUnrestricted(caller);
      const rows = await documents.listPersonal(caller.id);
      return present(filter ? await filtered(rows, filter) : rows);
    },

    /** Replaces a collection document's metadata (owner only, as deleting it is); its vectors follow. */
    async setMetadata(caller: Caller, collectionId: string, documentId: string, metadata: DocumentMetadata) {
      await access.requireOwner(caller, collectionId);
      const doc = isUuid(documentId) ? await documents.findInCollection(collectionId, documentId) : undefined;
      if (!doc || doc.deleting_at) throw notFound('Document');
      const [listed] = await present([await updateMetadata(doc, metadata)]);
      return listed as ListedDocument;
    },

    async setPersonalMetadata(caller: Caller, documentId: string, metadata: DocumentMetadata) {
      access.requireUnrestricted(caller);
      const doc = isUuid(documentId) ? await documents.findPersonal(caller.id, documentId) : undefined;
      if (!doc || doc.deleting_at) throw notFound('Document');
      const [listed] = await present([await updateMetadata(doc, metadata)]);
      return listed as ListedDocument;
    },

    async deletePersonal(caller: Caller, documentId: string): Promise<string> {
      access.requireUnrestricted(caller);
      const doc = isUuid(documentId) ? await documents.findPersonal(caller.id, documentId) : undefined;
      if (!doc) throw notFound('Document');
      await purge(doc);
      await audit(caller, 'document.deleted', { type: 'document', id: doc.id, collectionId: null }, { name: doc.name });
      return documentId;
    },

    async delete(caller: Caller, collectionId: string, documentId: string): Promise<string> {
      await access.requireOwner(caller, collectionId);
      const doc = isUuid(documentId) ? await documents.findInCollection(collectionId, documentId) : undefined;
      if (!doc) throw notFound('Document');
      await purge(doc);
      await audit(
        caller,
        'document.deleted',
        { type: 'document', id: doc.id, collectionId: doc.collection_id },
        { name: doc.name },
      );
      return documentId;
    },
  };
}

export type DocumentService = ReturnType<typeof createDocumentService>;
