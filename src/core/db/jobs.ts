import type { Sql } from './client.ts';
import type { NewDocument } from './documents.ts';
import { endJob, type JobEnding } from './job-endings.ts';

export type JobStatus = 'queued' | 'processing' | 'succeeded' | 'partial' | 'failed';
export const JOB_STATUSES = ['queued', 'processing', 'succeeded', 'partial', 'failed'] as const satisfies readonly JobStatus[];

export interface JobRow {
  job_id: string;
  collection_id: string | null;
  /** The document it makes; null once a failed or cancelled job's document is removed. */
  document_id: string | null;
  /** A new version's job: the document it replaces once it is indexed. */
  replaces_document_id: string | null;
  source: string;
  status: JobStatus;
  chunks_processed: number;
  chunks_total: number;
  error_message: string | null;
  created_at: string;
  updated_at: string;
}

export interface JobFilter {
  /** A collection's jobs; null: the personal namespace's; undefined: all. */
  collectionId?: string | null;
  status?: JobStatus;
  limit: number;
  offset: number;
}

/** A job as its creator makes it. */
export interface NewJob {
  id: string;
  user_id: string;
  collection_id: string | null;
  source: string;
  /** The API key it was made with, which its usage rows carry; null for a bearer token or a scheduled sync. */
  api_key_id: string | null;
}

/** The message of a job its creator cancelled. */
export const CANCELLED = 'Cancelled';

const COLUMNS = `id as job_id, collection_id, document_id, replaces_document_id, source, status, chunks_processed,
                 chunks_total, error_message, created_at, updated_at`;

export function createJobRepo(sql: Sql) {
  return {
    /**
     * A document and its job in one statement: as atomic as a transaction, without holding a
     * connection (or PGlite's one session) across round trips between the two inserts.
     */
    async insertWithDocument(doc: NewDocument, job: NewJob & { replaces_document_id?: string }): Promise<void> {
      // As jsonb: postgres.js would otherwise send the object as text.
      const row = { ...doc, metadata: sql.json(doc.metadata ?? {}) };
      await sql`
        with document as (insert into documents ${sql(row)} returning id)
        insert into ingest_jobs (id, user_id, collection_id, document_id, source, replaces_document_id, api_key_id)
        values (${job.id}, ${job.user_id}, ${job.collection_id}, (select id from document), ${job.source},
                ${job.replaces_document_id ?? null}, ${job.api_key_id})`;
    },

    /**
     * A job for bytes the namespace already holds: it does no work, and ends at once as the job that
     * made the document ended, with its webhook deliveries like any ending.
     */
    async insertEnded(
      job: NewJob & { document_id: string },
      ending: { status: 'succeeded' | 'partial' | 'failed'; errorMessage: string | null; chunks: number },
    ): Promise<JobEnding> {
      await sql`
        insert into ingest_jobs (id, user_id, collection_id, document_id, source, chunks_processed, chunks_total, extracted,
                                 api_key_id)
        values (${job.id}, ${job.user_id}, ${job.collection_id}, ${job.document_id}, ${job.source},
                ${ending.chunks}, ${ending.chunks}, true, ${job.api_key_id})`;
      return endJob(sql, job.id, ending.status, ending.errorMessage);
    },

    /** Only the creator sees a job; to anyone else it does not exist. */
    async findOwn(id: string, userId: string): Promise<JobRow | undefined> {
      const [row] = await sql<JobRow[]>`
        select ${sql.unsafe(COLUMNS)} from ingest_jobs where id = ${id} and user_id = ${userId}`;
      return row;
    },

    /** The caller's own jobs, newest first. */
    list(userId: string, filter: JobFilter): Promise<JobRow[]> {
      const inCollection =
        filter.collectionId === undefined
          ? sql``
          : filter.collectionId === null
            ? sql`and collection_id is null`
            : sql`and collection_id = ${filter.collectionId}`;
      return sql<JobRow[]>`
        select ${sql.unsafe(COLUMNS)} from ingest_jobs
         where user_id = ${userId} ${inCollection} ${filter.status ? sql`and status = ${filter.status}` : sql``}
         order by created_at desc, id desc limit ${filter.limit} offset ${filter.offset}`;
    },

    /**
     * Ends the creator's unfinished job as failed, "Cancelled", its document to be removed; not one that has
     * ended, or that is already replacing the document it is a new version of.
     */
    cancel: (id: string, userId: string): Promise<JobEnding> => endJob(sql, id, 'failed', CANCELLED, { cancelledBy: userId }),

    async delete(id: string): Promise<void> {
      await sql`delete from ingest_jobs where id = ${id}`;
    },
  };
}

export type JobRepo = ReturnType<typeof createJobRepo>;
