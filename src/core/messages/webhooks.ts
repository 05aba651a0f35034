import type { Queue, QueuedMessage } from '../adapters/queue.ts';
import type { DeliveryRepo } from '../db/webhook-deliveries.ts';
import { FAILURE_PATH } from './ingest.ts';
import type { Traced } from './request-id.ts';

export const WEBHOOK_EVENTS = ['ingest.succeeded', 'ingest.failed', 'ingest.partial', 'source.synced'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** The body a receiver gets: the job's ending (src/core/db/job-endings.ts writes it). */
export interface WebhookPayload {
  event: WebhookEvent;
  job_id: string;
  collection_id: string | null;
  document_id: string | null;
  source: string;
  chunks_total: number;
  error_message: string | null;
  occurred_at: string;
}

/** What QStash hands the ingest worker, which makes the attempt: one delivery. */
export interface WebhookMessage extends Traced {
  delivery_id: string;
}

/** The ingest worker's path for deliveries; when every retry failed, QStash calls its FAILURE_PATH. */
export const WEBHOOK_PATH = '/webhooks';

/**
 * Attempts after the first. With QStash's backoff (`nextRetryDelaySeconds`) they come after about 12 s,
 * 2.5 min, 30 min, 6 h and 24 h: a receiver down for a day still gets its events.
 */
export const WEBHOOK_RETRIES = 5;

/** QStash's default backoff, in seconds, before the retry that follows `retried` retries: min(1 day, e^(2.5·(retried+1))). */
export const nextRetryDelaySeconds = (retried: number) => Math.min(86_400, Math.exp(2.5 * (retried + 1)));

export function webhookMessage(ingestWorkerUrl: string, deliveryId: string): QueuedMessage<WebhookMessage> {
  const base = ingestWorkerUrl.replace(/\/+$/, '');
  return {
    destination: `${base}${WEBHOOK_PATH}`,
    body: { delivery_id: deliveryId },
    deduplicationId: `webhook-${deliveryId}`,
    failureCallback: `${base}${FAILURE_PATH}`,
    retries: WEBHOOK_RETRIES,
  };
}

/**
 * Hands deliveries to the queue and marks them queued. If the queue fails they stay unqueued: a
 * redelivered step of the job, or the ingest worker's sweep, queues them again (the deduplication id
 * makes a second hand-over harmless).
 */
export async function queueDeliveries(
  deps: { queue: Queue /** The ingest worker's URL. */; workerUrl: string; deliveries: Pick<DeliveryRepo, 'markQueued'> },
  ids: string[],
): Promise<void> {
  if (ids.length === 0) return;
  await deps.queue.publish(ids.map((id) => webhookMessage(deps.workerUrl, id)));
  await deps.deliveries.markQueued(ids);
}
