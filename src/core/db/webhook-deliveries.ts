import type { WebhookEvent } from '../webhooks/payload.ts';
import type { Sql } from './client.ts';

export type DeliveryStatus = 'pending' | 'delivered' | 'retrying' | 'failed' | 'skipped';

/** One attempt, as `GET /webhooks/{id}/deliveries` shows it. */
export interface AttemptRecord {
  attempt: number;
  at: string;
  response_status: number | null;
  error: string | null;
  duration_ms: number;
}

export interface DeliveryRow {
  id: string;
  webhook_id: string;
  job_id: string;
  /** The job's file name or URL, from the payload. */
  source: string;
  event: WebhookEvent;
  status: DeliveryStatus;
  attempts: number;
  response_status: number | null;
  last_error: string | null;
  next_retry_at: string | null;
  attempts_log: AttemptRecord[];
  created_at: string;
  updated_at: string;
}

/** What the delivering worker needs: the fixed body and where, and with what, to send it. */
export interface DeliveryTarget {
  id: string;
  event: WebhookEvent;
  /** The JSON of a WebhookPayload (src/core/webhooks/payload.ts), fixed when the job or sync ended. */
  payload: string;
  status: DeliveryStatus;
  attempts: number;
  url: string;
  secret: string;
  active: boolean;
}

export interface AttemptOutcome {
  status: Exclude<DeliveryStatus, 'pending' | 'skipped'>;
  responseStatus: number | null;
  error: string | null;
  nextRetryAt: Date | null;
  durationMs: number;
}

/** Attempts kept per delivery; the count goes on past it. */
const LOGGED_ATTEMPTS = 20;
const FINAL: readonly DeliveryStatus[] = ['delivered', 'failed', 'skipped'];

export function createDeliveryRepo(sql: Sql) {
  return {
    async target(id: string): Promise<DeliveryTarget | undefined> {
      const [row] = await sql<DeliveryTarget[]>`
        select d.id, d.event, d.payload, d.status, d.attempts, w.url, w.secret, w.active
          from webhook_deliveries d join webhooks w on w.id = d.webhook_id
         where d.id = ${id}`;
      return row;
    },

    /** An attempt's outcome; a delivery already settled (a duplicate delivery raced this one) stays as it is. */
    async record(id: string, outcome: AttemptOutcome): Promise<void> {
      const entry = {
        response_status: outcome.responseStatus,
        error: outcome.error,
        duration_ms: Math.round(outcome.durationMs),
      };
      await sql`
        update webhook_deliveries
           set status = ${outcome.status}, attempts = attempts + 1, response_status = ${outcome.responseStatus},
               last_error = ${outcome.error}, next_retry_at = ${outcome.nextRetryAt}, updated_at = now(),
               attempts_log = (case when jsonb_array_length(attempts_log) >= ${LOGGED_ATTEMPTS}
                                    then attempts_log - 0 else attempts_log end)
                              || jsonb_build_array(${sql.json(entry)}::jsonb || jsonb_build_object(
                                   'attempt', attempts + 1,
                                   'at', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
         where id = ${id} and status not in ${sql(FINAL as DeliveryStatus[])}`;
    },

    /** Not sent: its registration was paused meanwhile. No attempt was made, so none is counted. */
    async skip(id: string, reason: string): Promise<void> {
      await sql`
        update webhook_deliveries set status = 'skipped', last_error = ${reason}, next_retry_at = null, updated_at = now()
         where id = ${id} and status not in ${sql(FINAL as DeliveryStatus[])}`;
    },

    /** Every retry failed (QStash's failure callback): settled as failed, unless an attempt settled it. */
    async giveUp(id: string, error: string): Promise<void> {
      await sql`
        update webhook_deliveries set status = 'failed', last_error = coalesce(last_error, ${error}),
               next_retry_at = null, updated_at = now()
         where id = ${id} and status not in ${sql(FINAL as DeliveryStatus[])}`;
    },

    async markQueued(ids: string[]): Promise<void> {
      if (ids.length === 0) return;
      await sql`update webhook_deliveries set queued_at = now() where id in ${sql(ids)} and queued_at is null`;
    },

    /** Deliveries made but never handed to the queue (its outage outlasted the step's retries). */
    async unqueued(olderThanMinutes: number, limit: number): Promise<string[]> {
      const rows = await sql<{ id: string }[]>`
        select id from webhook_deliveries
         where queued_at is null and created_at < now() - make_interval(mins => ${olderThanMinutes})
         order by created_at limit ${limit}`;
      return rows.map((row) => row.id);
    },

    /** A job's deliveries not yet handed to the queue: a step redelivered after the job ended queues them. */
    async unqueuedForJob(jobId: string): Promise<string[]> {
      const rows = await sql<{ id: string }[]>`
        select id from webhook_deliveries where job_id = ${jobId} and queued_at is null`;
      return rows.map((row) => row.id);
    },

    list(webhookId: string, limit: number, offset: number): Promise<DeliveryRow[]> {
      return sql<DeliveryRow[]>`
        select id, webhook_id, job_id, payload::jsonb ->> 'source' as source, event, status, attempts, response_status,
               last_error, next_retry_at,
               attempts_log, created_at, updated_at
          from webhook_deliveries where webhook_id = ${webhookId}
         order by created_at desc, id limit ${limit} offset ${offset}`;
    },
  };
}

export type DeliveryRepo = ReturnType<typeof createDeliveryRepo>;
