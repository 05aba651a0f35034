import type { Caller } from '#core/caller.ts';
import { isUuid } from '#core/db/client.ts';
import type { DocumentRow } from '#core/db/documents.ts';
import { notFound } from '#core/errors.ts';
import type { ServiceDeps } from './deps.ts';
import type { Purge } from './purge.ts';

/** Signed links to originals are short-lived: clients fetch them on demand. */
export const OPEN_URL_SECONDS = 3600;

export interface ListedDocument {
  id: string;
  name: string;
  source_kind: DocumentRow['source_kind'];
  content_type: string;
  size_bytes: number;
  chunk_count: number;
  created_at: string;
  open_url: string | null;
}

export function createDocumentService(deps: Pick<ServiceDeps, 'access' | 'documents' | 'store'> & { purge: Purge }) {
  const { access, documents, store, purge } = deps;

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
    }));
  }

  return {
    /** Every document, or a page of them when `page` is given. */
    async list(caller: Caller, collectionId: string, page?: { limit: number | null; offset: number }): Promise<ListedDocument[]> {
      await access.requireParticipant(caller, collectionId);
      return present(await documents.listForCollection(collectionId, page));
    },

    /** The caller's personal namespace: only its owner sees or deletes these. */
    async listPersonal(caller: Caller): Promise<ListedDocument[]> {
      access.requireUnrestricted(caller);
      return present(await documents.listPersonal(caller.id));
    },

    async deletePersonal(caller: Caller, documentId: string): Promise<string> {
      access.requireUnrestricted(caller);
      const doc = isUuid(documentId) ? await documents.findPersonal(caller.id, documentId) : undefined;
      if (!doc) throw notFound('Document');
      await purge(doc);
      return documentId;
    },

    async delete(caller: Caller, collectionId: string, documentId: string): Promise<string> {
      await access.requireOwner(caller, collectionId);
      const doc = isUuid(documentId) ? await documents.findInCollection(collectionId, documentId) : undefined;
      if (!doc) throw notFound('Document');
      await purge(doc);
      return documentId;
    },
  };
}

export type DocumentService = ReturnType<typeof createDocumentService>;
