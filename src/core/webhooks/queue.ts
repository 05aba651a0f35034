import type { Queue, QueuedMessage } from '../adapters/queue.ts';
import type { DeliveryRepo } from '../db/webhook-deliveries.ts';
import { FAILURE_PATH } from '../messages/ingest.ts';
import { WEBHOOK_PATH, type WebhookMessage } from '../messages/webhooks.ts';

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
