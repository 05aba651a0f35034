import type { DocType } from '../documents/detect-type.ts';
import { isUuid, type Sql } from './client.ts';
import type { JobStatus } from './jobs.ts';

export type SourceKind = 'upload' | 'url';

export interface DocumentRow {
  id: string;
  collection_id: string | null;
  user_id: string;
  name: string;
  source_kind: SourceKind;
  source_url: string | null;
  content_type: string;
  /** How it is parsed; a URL's is known once the ingest worker has fetched it. */
  doc_type: DocType | null;
  size_bytes: number;
  storage_path: string | null;
  /** The title the ingest worker found (issue 22): the file's own, else its first heading; null before, or when it has neither. */
  title: string | null;
  /** The file's own date (PDF CreationDate, Office dcterms:created), YYYY-MM-DD; null when it carries none. */
  document_date: string | null;
  /** Its chunks were indexed with its context; false for those indexed before (a re-chunk gives it them). */
  context_read: boolean;
  chunk_size: number;
  chunk_count: number;
  /** Of an upload's bytes; one document per namespace holds given bytes. Null for URLs and re-chunk copies. */
  content_sha256: string | null;
  /** What its owner attached (issue 22): flat, of strings, numbers, booleans and lists of strings; {} when none. */
  metadata: Record<string, string | number | boolean | string[]>;
  /** Set when its deletion began: from then on it is not listed, searched or replaced, and a DELETE finishes it. */
  deleting_at: string | null;
  /** The source whose crawl made it (issue 24), and when that last fetched the page and last found it changed. */
  source_id: string | null;
  fetched_at: string | null;
  changed_at: string | null;
  created_at: string;
}

export type NewDocument = Partial<Pick<DocumentRow, 'created_at' | 'content_sha256' | 'metadata'>> &
  Pick<
    DocumentRow,
    | 'id'
    | 'collection_id'
    | 'user_id'
    | 'name'
    | 'source_kind'
    | 'source_url'
    | 'content_type'
    | 'doc_type'
    | 'size_bytes'
    | 'storage_path'
    | 'chunk_size'
  >;

/** A chunk as stored beside its vector: its text (an image's description) and where it sits. */
export interface StoredChunk {
  chunk_index: number;
  chunk_type: 'text' | 'image_description';
  text: string | null;
  metadata: Record<string, unknown>;
  image_path: string | null;
}

export function createDocumentRepo(sql: Sql) {
  return {
    async find(id: string): Promise<DocumentRow | undefined> {
      const [row] = await sql<DocumentRow[]>`select * from documents where id = ${id}`;
      return row;
    },

    async findInCollection(collectionId: string, id: string): Promise<DocumentRow | undefined> {
      const [row] = await sql<DocumentRow[]>`select * from documents where id = ${id} and collection_id = ${collectionId}`;
      return row;
    },

    /** Newest first; a page of them when `page` is given (a null limit: all from the offset). */
    listForCollection(collectionId: string, page?: { limit: number | null; offset: number }): Promise<DocumentRow[]> {
      return sql<DocumentRow[]>`
        select * from documents where collection_id = ${collectionId} and deleting_at is null order by created_at desc, id
        ${page ? sql`limit ${page.limit} offset ${page.offset}` : sql``}`;
    },

    /**
     * The document of the namespace that holds these bytes, with the job that made it (its first): what
     * an upload of the same bytes answers with.
     */
    async findByContent(
      collectionId: string | null,
      userId: string,
      sha256: string,
    ): Promise<
      (DocumentRow & { job: { id: string; user_id: string; status: JobStatus; error_message: string | null } | null }) | undefined
    > {
      const [row] = await sql<
        (DocumentRow & { job: { id: string; user_id: string; status: JobStatus; error_message: string | null } | null })[]
      >`
        select d.*, (select jsonb_build_object('id', j.id, 'user_id', j.user_id, 'status', j.status, 'error_message', j.error_message)
                       from ingest_jobs j where j.document_id = d.id order by j.created_at limit 1) as job
          from documents d
         where coalesce(d.collection_id, d.user_id) = ${collectionId ?? userId} and d.content_sha256 = ${sha256}
           and d.deleting_at is null`;
      return row;
    },

    /** Whether a job is making or replacing this document right now. */
    async hasWorkInProgress(id: string): Promise<boolean> {
      const rows = await sql`
        select 1 from ingest_jobs where (document_id = ${id} or replaces_document_id = ${id})
                                    and status in ('queued', 'processing') limit 1`;
      return rows.length > 0;
    },

    listPersonal(userId: string): Promise<DocumentRow[]> {
      return sql<DocumentRow[]>`
        select * from documents where collection_id is null and user_id = ${userId} and deleting_at is null
         order by created_at desc, id`;
    },

    async findPersonal(userId: string, id: string): Promise<DocumentRow | undefined> {
      const [row] = await sql<DocumentRow[]>`
        select * from documents where id = ${id} and collection_id is null and user_id = ${userId}`;
      return row;
    },

    /**
     * The collection's documents cut at another chunk size that have a stored original and nothing in
     * progress: neither their own ingestion nor a re-chunk of them.
     */
    listToRechunk(collectionId: string, chunkSize: number): Promise<DocumentRow[]> {
      return sql<DocumentRow[]>`
        select d.* from documents d
         where d.collection_id = ${collectionId} and d.storage_path is not null
           and (d.chunk_size <> ${chunkSize} or (not d.context_read and d.chunk_count > 0))
           and d.deleting_at is null
           and not exists (select 1 from ingest_jobs j
                            where (j.document_id = d.id or j.replaces_document_id = d.id)
                              and j.status in ('queued', 'processing'))
         order by d.created_at, d.id`;
    },

    /**
     * The first step of a deletion, before anything is removed: from now on the document is not listed,
     * searched or replaced, and an ingest step that upserts its vectors takes them back (it reads this mark
     * after its upsert). Its bytes are free for a new upload at once. False if the row is gone.
     */
    async markDeleting(id: string): Promise<boolean> {
      const rows = await sql`
        update documents set deleting_at = coalesce(deleting_at, now()), content_sha256 = null where id = ${id} returning id`;
      return rows.length > 0;
    },

    /** Of these documents, the ones that exist and are not being deleted, in a collection not being deleted. */
    async live(ids: readonly string[]): Promise<Set<string>> {
      const wanted = ids.filter(isUuid);
      if (wanted.length === 0) return new Set();
      const rows = await sql<{ id: string }[]>`
        select d.id from documents d left join collections c on c.id = d.collection_id
         where d.id = any(${`{${wanted.join(',')}}`}::uuid[]) and d.deleting_at is null and c.deleting_at is null`;
      return new Set(rows.map((row) => row.id));
    },

    async vectorIds(documentId: string): Promise<string[]> {
      const rows = await sql<{ vector_id: string }[]>`
        select vector_id from document_chunks where document_id = ${documentId} order by chunk_index`;
      return rows.map((row) => row.vector_id);
    },

    /**
     * Its indexed chunks from `from` to `to` (both included), in order: what a citation opens, with its neighbours.
     * Chunks still pending or failed are not searchable, so they are not shown either.
     */
    chunksBetween(documentId: string, from: number, to: number): Promise<StoredChunk[]> {
      return sql<StoredChunk[]>`
        select chunk_index, chunk_type, text, metadata, image_path from document_chunks
         where document_id = ${documentId} and chunk_index between ${from} and ${to} and state = 'done'
         order by chunk_index`;
    },

    /** Replaces its metadata and answers the row; undefined if it is gone or being deleted. */
    async setMetadata(id: string, metadata: DocumentRow['metadata']): Promise<DocumentRow | undefined> {
      const [row] = await sql<DocumentRow[]>`
        update documents set metadata = ${sql.json(metadata)} where id = ${id} and deleting_at is null returning *`;
      return row;
    },

    /** Chunk rows go with it by cascade. */
    async delete(id: string): Promise<boolean> {
      return (await sql`delete from documents where id = ${id} returning id`).length > 0;
    },
  };
}

export type DocumentRepo = ReturnType<typeof createDocumentRepo>;
