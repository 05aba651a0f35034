import type { Sql, Tx } from './client.ts';
import type { NewDocument } from './documents.ts';

export type JobStatus = 'queued' | 'processing' | 'succeeded' | 'partial' | 'failed';

export interface JobRow {
  job_id: string;
  collection_id: string | null;
  source: string;
  status: JobStatus;
  chunks_processed: number;
  chunks_total: number;
  error_message: string | null;
  created_at: string;
  updated_at: string;
}

export function createJobRepo(sql: Sql) {
  return {
    async insert(
      tx: Tx | Sql,
      job: { id: string; user_id: string; collection_id: string | null; document_id: string | null; source: string },
    ): Promise<void> {
      await tx`insert into ingest_jobs ${tx(job)}`;
    },

    /**
     * A document and its job in one statement: as atomic as a transaction, without holding a
     * connection (or PGlite's one session) across round trips between the two inserts.
     */
    async insertWithDocument(
      doc: NewDocument,
      job: { id: string; user_id: string; collection_id: string | null; source: string; replaces_document_id?: string },
    ): Promise<void> {
      await sql`
        with document as (insert into documents ${sql(doc)} returning id)
        insert into ingest_jobs (id, user_id, collection_id, document_id, source, replaces_document_id)
        values (${job.id}, ${job.user_id}, ${job.collection_id}, (select id from document), ${job.source},
                ${job.replaces_document_id ?? null})`;
    },

    /** Only the creator sees a job; to anyone else it does not exist. */
    async findOwn(id: string, userId: string): Promise<JobRow | undefined> {
      const [row] = await sql<JobRow[]>`
        select id as job_id, collection_id, source, status, chunks_processed, chunks_total,
               error_message, created_at, updated_at
          from ingest_jobs where id = ${id} and user_id = ${userId}`;
      return row;
    },

    async delete(id: string): Promise<void> {
      await sql`delete from ingest_jobs where id = ${id}`;
    },
  };
}

export type JobRepo = ReturnType<typeof createJobRepo>;
