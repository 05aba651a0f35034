import type { Sql } from './client.ts';
import type { JobStatus } from './jobs.ts';

export type EndStatus = Exclude<JobStatus, 'queued' | 'processing'>;

export interface JobEnding {
  /** Only one caller wins the move to a terminal status; the others see false and do nothing more. */
  ended: boolean;
  /** The webhook deliveries this ending made, to be handed to the queue. */
  deliveries: string[];
}

/**
 * Ends a job and records, in the same statement, one delivery for every active webhook of its owner
 * that asked for this event (in any collection, or in the job's): an ending is never lost between the
 * job's row and the queue. The payload is fixed here, so every attempt sends and signs the same bytes.
 * A cancellation through the API (`cancelledBy` its owner) ends only a job that is not replacing an old
 * version already (`finishing`), and its payload names no document: it is removed right after, as any
 * failed job's is.
 */
export async function endJob(
  sql: Sql,
  jobId: string,
  status: EndStatus,
  errorMessage: string | null,
  { cancelledBy }: { cancelledBy?: string } = {},
): Promise<JobEnding> {
  const [row] = await sql<{ ended: number; deliveries: string[] }[]>`
    with ended as (
      update ingest_jobs set status = ${status}, error_message = ${errorMessage}, updated_at = now()
       where id = ${jobId} and status in ('queued', 'processing')
             ${cancelledBy ? sql`and user_id = ${cancelledBy} and not finishing` : sql``}
      returning id, user_id, collection_id, document_id, source, status, chunks_total, error_message, updated_at
    ), deliveries as (
      insert into webhook_deliveries (webhook_id, job_id, event, payload)
      select w.id, e.id, 'ingest.' || e.status,
             jsonb_build_object(
               'event', 'ingest.' || e.status, 'job_id', e.id, 'collection_id', e.collection_id,
               'document_id', case when ${Boolean(cancelledBy)} then null else e.document_id end,
               'source', e.source, 'chunks_total', e.chunks_total,
               'error_message', e.error_message,
               'occurred_at', to_char(e.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text
        from ended e
        join webhooks w on w.user_id = e.user_id and w.active
                       and (w.collection_id is null or w.collection_id = e.collection_id)
                       and w.events ? ('ingest.' || e.status)
      returning id
    )
    select (select count(*)::int from ended) as ended,
           coalesce((select jsonb_agg(id) from deliveries), '[]'::jsonb) as deliveries`;
  return { ended: (row?.ended ?? 0) > 0, deliveries: row?.deliveries ?? [] };
}
