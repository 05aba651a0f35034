import type { DocType } from '../documents/detect-type.ts';
import type { Sql } from './client.ts';
import type { DocumentRow } from './documents.ts';
import { type EndStatus, endJob, type JobEnding } from './job-endings.ts';
import type { JobStatus } from './jobs.ts';

export interface PipelineJob {
  id: string;
  /** Who started the job (the uploader, or the admin of a re-chunk): its steps run under their flow-control key. */
  user_id: string;
  status: JobStatus;
  chunks_total: number;
  warnings: string[];
  /** The next PDF page to extract. */
  extract_cursor: number;
  /** Every page has been extracted: the job may finish once no chunk is pending. */
  extracted: boolean;
  /** Bytes pdf.js has decompressed for the document over the steps so far (its decoding budget). */
  decoded_bytes: number;
  /** A re-chunk: the document this job's one replaces once it is indexed. */
  replaces_document_id: string | null;
  /** The API key the job was made with: its usage rows carry it. */
  api_key_id: string | null;
  document: DocumentRow | null;
}

export interface ChunkRow {
  chunk_index: number;
  vector_id: string;
  chunk_type: 'text' | 'image_description';
  text: string | null;
  metadata: Record<string, unknown>;
  image_path: string | null;
  /** An earlier chunk of the same heading path and text: its batch embeds this one with it. */
  same_as: number | null;
}

/** A copy (ChunkRow.same_as) as its original's batch reads it: its text is the original's, so it is not read. */
export type CopyRow = Omit<ChunkRow, 'text'> & { same_as: number };

/** Unset same_as: not a copy. */
export type NewChunk = Omit<ChunkRow, 'same_as'> & { same_as?: number | null };

export interface Progress {
  total: number;
  pending: number;
  failed: number;
  indexed: number;
  errors: string[];
}

/** An int[] literal: the client runs without type discovery, so it cannot encode JS arrays itself. */
const intArray = (values: number[]) => `{${values.map((v) => Math.trunc(v)).join(',')}}`;

export const TERMINAL: readonly JobStatus[] = ['succeeded', 'partial', 'failed'];

/** Chunk rows per insert statement. */
const CHUNKS_PER_INSERT = 500;

/** The SQL of the ingest pipeline. Every write is safe to repeat: deliveries are at-least-once. */
export function createPipelineDb(sql: Sql) {
  /**
   * The chunk rows (at most one insert's worth) and the job's progress in one statement: the
   * count before it plus the rows it added, since a statement does not see its own inserts.
   */
  async function saveSmallRange(
    jobId: string,
    documentId: string,
    chunks: NewChunk[],
    warnings: string[],
    progress: { extractCursor: number; extracted: boolean; decodedBytes: number },
  ): Promise<void> {
    const rows = chunks.map((chunk) => ({
      ...chunk,
      document_id: documentId,
      metadata: sql.json(chunk.metadata as never),
      same_as: chunk.same_as ?? null,
    }));
    const inserted =
      rows.length > 0
        ? sql`insert into document_chunks ${sql(rows, 'document_id', 'chunk_index', 'vector_id', 'chunk_type', 'text', 'metadata', 'image_path', 'same_as')}
              on conflict do nothing returning 1`
        : sql`select 1 where false`;
    await sql`
      with inserted as (${inserted})
      update ingest_jobs
         set chunks_total = (select count(*) from document_chunks where document_id = ${documentId})
                            + (select count(*) from inserted),
             warnings = warnings || ${sql.json(warnings)},
             extract_cursor = ${progress.extractCursor}, extracted = ${progress.extracted},
                        decoded_bytes = ${progress.decodedBytes}, updated_at = now()
       where id = ${jobId}`;
  }

  return {
    /** The job and its document, in one round trip: every step starts here. */
    async job(id: string): Promise<PipelineJob | undefined> {
      const [job] = await sql<(Omit<PipelineJob, 'document'> & { document: DocumentRow | null })[]>`
        select j.id, j.user_id, j.status, j.chunks_total, j.warnings, j.extract_cursor, j.extracted, j.replaces_document_id,
               j.api_key_id, j.decoded_bytes::float8 as decoded_bytes,
               case when d.id is null then null else to_jsonb(d) end as document
          from ingest_jobs j left join documents d on d.id = j.document_id
         where j.id = ${id}`;
      return job;
    },

    async markProcessing(id: string): Promise<void> {
      await sql`update ingest_jobs set status = 'processing', updated_at = now() where id = ${id} and status = 'queued'`;
    },

    async updateFetched(
      documentId: string,
      fields: { content_type: string; doc_type: DocType; size_bytes: number; storage_path: string },
    ): Promise<void> {
      await sql`update documents set content_type = ${fields.content_type}, doc_type = ${fields.doc_type},
                       size_bytes = ${fields.size_bytes}, storage_path = ${fields.storage_path} where id = ${documentId}`;
    },

    /** What the first range found of the document's context (src/retrieval/document-context.ts), for its chunks' vectors. */
    async saveContext(documentId: string, context: { title: string | null; document_date: string | null }): Promise<void> {
      await sql`update documents set title = ${context.title}, document_date = ${context.document_date}, context_read = true
                 where id = ${documentId}`;
    },

    /**
     * A range's chunk rows and the job's progress through the document in one
     * transaction: a job whose cursor has moved past a range has all that range's rows.
     */
    async saveRange(
      jobId: string,
      documentId: string,
      chunks: NewChunk[],
      warnings: string[],
      progress: { extractCursor: number; extracted: boolean; decodedBytes: number },
    ): Promise<void> {
      // A range of one insert (most documents) is one statement, atomic without a transaction.
      if (chunks.length <= CHUNKS_PER_INSERT) return saveSmallRange(jobId, documentId, chunks, warnings, progress);
      await sql.begin(async (tx) => {
        for (let i = 0; i < chunks.length; i += CHUNKS_PER_INSERT) {
          const rows = chunks.slice(i, i + CHUNKS_PER_INSERT).map((chunk) => ({
            ...chunk,
            document_id: documentId,
            metadata: tx.json(chunk.metadata as never),
            same_as: chunk.same_as ?? null,
          }));
          await tx`insert into document_chunks ${tx(rows, 'document_id', 'chunk_index', 'vector_id', 'chunk_type', 'text', 'metadata', 'image_path', 'same_as')}
                   on conflict do nothing`;
        }
        await tx`update ingest_jobs
                    set chunks_total = (select count(*) from document_chunks where document_id = ${documentId}),
                        warnings = warnings || ${tx.json(warnings)},
                        extract_cursor = ${progress.extractCursor}, extracted = ${progress.extracted},
                        decoded_bytes = ${progress.decodedBytes}, updated_at = now()
                  where id = ${jobId}`;
      });
    },

    async imageCount(documentId: string): Promise<number> {
      const [row] = await sql<{ count: number }[]>`
        select count(*)::int as count from document_chunks where document_id = ${documentId} and chunk_type = 'image_description'`;
      return row?.count ?? 0;
    },

    pendingChunks(documentId: string, from: number, to: number): Promise<ChunkRow[]> {
      return sql<ChunkRow[]>`
        select chunk_index, vector_id, chunk_type, text, metadata, image_path, same_as from document_chunks
         where document_id = ${documentId} and chunk_index >= ${from} and chunk_index < ${to} and state = 'pending'
         order by chunk_index`;
    },

    /**
     * The pending chunks of from..to that their batch writes itself: all but the copies (same_as) of chunks
     * still pending, which those chunks' batches write. A copy of a chunk done already is the batch's own.
     */
    batchChunks(documentId: string, from: number, to: number): Promise<ChunkRow[]> {
      return sql<ChunkRow[]>`
        select c.chunk_index, c.vector_id, c.chunk_type, c.text, c.metadata, c.image_path, c.same_as
          from document_chunks c
         where c.document_id = ${documentId} and c.chunk_index >= ${from} and c.chunk_index < ${to} and c.state = 'pending'
           and (c.same_as is null or not exists (
                 select 1 from document_chunks o
                  where o.document_id = c.document_id and o.chunk_index = c.same_as and o.state = 'pending'))
         order by c.chunk_index`;
    },

    /** Pending copies of the chunks from..to, after chunk `after`, a page at a time; without their text (their chunk's). */
    pendingCopies(documentId: string, range: { from: number; to: number }, after: number, limit: number): Promise<CopyRow[]> {
      return sql<CopyRow[]>`
        select chunk_index, vector_id, chunk_type, metadata, image_path, same_as from document_chunks
         where document_id = ${documentId} and same_as >= ${range.from} and same_as < ${range.to}
           and chunk_index > ${after} and state = 'pending'
         order by chunk_index limit ${limit}`;
    },

    async markDone(documentId: string, described: { index: number; text: string }[], indexes: number[]): Promise<void> {
      for (const { index, text } of described) {
        await sql`update document_chunks set text = ${text} where document_id = ${documentId} and chunk_index = ${index}`;
      }
      if (indexes.length === 0) return;
      await sql`update document_chunks set state = 'done', error = null
                 where document_id = ${documentId} and chunk_index = any(${intArray(indexes)}::int[]) and state = 'pending'`;
    },

    async markFailed(documentId: string, indexes: number[], error: string): Promise<void> {
      if (indexes.length === 0) return;
      await sql`update document_chunks set state = 'failed', error = ${error}
                 where document_id = ${documentId} and chunk_index = any(${intArray(indexes)}::int[]) and state = 'pending'`;
    },

    /** Recounts from the chunk rows, so a repeated batch never counts twice; one statement, one round trip. */
    async refreshProgress(jobId: string, documentId: string): Promise<Progress & { extracted: boolean; warnings: string[] }> {
      const [row] = await sql<(Progress & { extracted: boolean | null; warnings: string[] | null })[]>`
        with progress as (
          select count(*)::int as total,
                 count(*) filter (where state = 'pending')::int as pending,
                 count(*) filter (where state = 'failed')::int as failed,
                 count(*) filter (where state = 'done' and coalesce(text, '') <> '')::int as indexed,
                 coalesce(jsonb_agg(distinct error) filter (where state = 'failed'), '[]'::jsonb) as errors
            from document_chunks where document_id = ${documentId}
        ), job as (
          update ingest_jobs set chunks_processed = (select total - pending from progress), updated_at = now()
           where id = ${jobId} and status = 'processing'
        ), document as (
          update documents set chunk_count = (select indexed from progress) where id = ${documentId}
        )
        select progress.*, j.extracted, j.warnings
          from progress left join ingest_jobs j on j.id = ${jobId}`;
      const progress = row ?? { total: 0, pending: 0, failed: 0, indexed: 0, errors: [], extracted: null, warnings: null };
      return { ...progress, extracted: progress.extracted ?? false, warnings: progress.warnings ?? [] };
    },

    /** Ends the job with its webhook deliveries (job-endings.ts); only one caller wins. */
    finish: (jobId: string, status: EndStatus, errorMessage: string | null): Promise<JobEnding> =>
      endJob(sql, jobId, status, errorMessage),

    /**
     * A new version's job, about to replace the old document: from now on it cannot be cancelled (job-endings.ts).
     * False when it was cancelled first.
     */
    async claimFinish(jobId: string): Promise<boolean> {
      const rows = await sql`update ingest_jobs set finishing = true where id = ${jobId} and status = 'processing' returning id`;
      return rows.length > 0;
    },

    /**
     * A re-chunk's copy takes the content hash of the document it replaced, in the statement that deletes
     * that document's row, so that the same bytes stay one document (the unique index) throughout.
     */
    async replaceDocument(oldId: string, newId: string): Promise<void> {
      await sql`
        with old as (delete from documents where id = ${oldId} returning content_sha256)
        update documents set content_sha256 = coalesce(content_sha256, (select content_sha256 from old))
         where id = ${newId}`;
    },

    async vectorIds(documentId: string): Promise<string[]> {
      const rows = await sql<{ vector_id: string }[]>`select vector_id from document_chunks where document_id = ${documentId}`;
      return rows.map((row) => row.vector_id);
    },

    /**
     * Whether the document is still wanted: its row is there and neither it nor its collection is being
     * deleted. A step reads this after it has written vectors or files, and takes them back when not.
     */
    async documentLive(id: string): Promise<boolean> {
      const rows = await sql`
        select 1 from documents d left join collections c on c.id = d.collection_id
         where d.id = ${id} and d.deleting_at is null and c.deleting_at is null`;
      return rows.length > 0;
    },

    /** As the API's purge does before removing anything (documents.ts markDeleting). */
    async markDeleting(id: string): Promise<void> {
      await sql`update documents set deleting_at = coalesce(deleting_at, now()), content_sha256 = null where id = ${id}`;
    },

    async deleteDocument(id: string): Promise<void> {
      await sql`delete from documents where id = ${id}`;
    },
  };
}

export type PipelineDb = ReturnType<typeof createPipelineDb>;
