import type { DeliveryRepo } from '#core/db/webhook-deliveries.ts';
import type { WebhookMessage } from '#core/messages/webhooks.ts';
import type { UrlVerdict } from '#core/urls/url-policy.ts';
import { nextRetryDelaySeconds, WEBHOOK_RETRIES } from '#core/webhooks/queue.ts';
import { sendToReceiver } from './send.ts';

export interface DeliveryDeps {
  deliveries: DeliveryRepo;
  checkUrl: (url: string) => Promise<UrlVerdict>;
}

/** Thrown so that QStash retries the delivery with its backoff; the attempt is already recorded. */
export class AttemptFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AttemptFailed';
  }
}

/**
 * One attempt of one delivery, recorded whatever its outcome. A failed attempt throws, so that QStash
 * retries it; the last one, or a URL the policy now refuses, settles the delivery as failed. Which
 * attempt is the last is counted from our own records, never from QStash's unsigned Upstash-Retried
 * header (a replayed delivery could claim any count); an attempt that crashed before it was recorded
 * only delays that, and QStash's failure callback settles the delivery then. A delivery for a
 * registration paused since is skipped. Jobs never wait on any of this.
 */
export async function deliverWebhook(deps: DeliveryDeps, message: WebhookMessage): Promise<void> {
  const target = await deps.deliveries.target(message.delivery_id);
  // Gone with its registration, or settled by an earlier delivery of the same message.
  if (!target || ['delivered', 'failed', 'skipped'].includes(target.status)) return;
  if (!target.active) return deps.deliveries.skip(target.id, 'The webhook was paused before this delivery');
  const started = Date.now();
  const sent = await sendToReceiver(
    { url: target.url, secret: target.secret, payload: target.payload, event: target.event, deliveryId: target.id },
    deps.checkUrl,
  );
  // Attempts made before this one; the first and WEBHOOK_RETRIES retries are all there are.
  const before = target.attempts;
  const last = sent.final || before >= WEBHOOK_RETRIES;
  await deps.deliveries.record(target.id, {
    status: sent.ok ? 'delivered' : last ? 'failed' : 'retrying',
    responseStatus: sent.responseStatus,
    error: sent.error,
    nextRetryAt: sent.ok || last ? null : new Date(Date.now() + nextRetryDelaySeconds(before) * 1000),
    durationMs: Date.now() - started,
  });
  if (!sent.ok && !last) throw new AttemptFailed(`webhook delivery ${target.id}: ${sent.error}`);
}

/** QStash's failure callback: no attempt got through. */
export async function giveUpDelivery(deps: Pick<DeliveryDeps, 'deliveries'>, message: WebhookMessage): Promise<void> {
  await deps.deliveries.giveUp(message.delivery_id, 'Every attempt failed');
}
