import type { Traced } from './request-id.ts';

/** What QStash hands the ingest worker, which makes the attempt: one delivery (src/core/webhooks/queue.ts queues it). */
export interface WebhookMessage extends Traced {
  delivery_id: string;
}

/** The ingest worker's path for deliveries; when every retry failed, QStash calls its FAILURE_PATH. */
export const WEBHOOK_PATH = '/webhooks';
