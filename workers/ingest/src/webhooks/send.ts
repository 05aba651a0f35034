import { DnsError } from '#core/urls/dns.ts';
import type { UrlVerdict } from '#core/urls/url-policy.ts';
import type { WebhookPayload } from '#core/webhooks/payload.ts';
import { signatureHeaders } from '#core/webhooks/signing.ts';

/**
 * Headers besides the signature's (src/core/webhooks/signing.ts). The delivery header repeats
 * `webhook-id` for receivers written before it; only `webhook-id` is signed.
 */
export const DELIVERY_HEADER = 'X-Service-Delivery';
export const EVENT_HEADER = 'X-Service-Event';

/** A receiver has this long to answer; a slow one costs an attempt, never the ingestion. */
export const RECEIVER_TIMEOUT_MS = 10_000;

export interface Sent {
  /** The receiver's answer; null when there was none. */
  responseStatus: number | null;
  ok: boolean;
  /** Why the attempt did not succeed, in our words (never the receiver's). */
  error: string | null;
  /** No retry can help: the URL is refused by the address policy. */
  final: boolean;
}

/**
 * One POST of the fixed body, signed for this attempt. The URL passes the receiver policy again now
 * (its host may resolve elsewhere than at registration, or its origin may have left
 * WEBHOOK_TRUSTED_ORIGINS), and a redirect is an answer, not a hop to follow.
 */
export async function sendToReceiver(
  target: {
    url: string;
    secret: string;
    /** The payload's JSON, as the SQL that ended the job or sync fixed it (src/core/webhooks/payload.ts is its schema). */
    payload: string;
    event: WebhookPayload['event'];
    deliveryId: string;
  },
  checkUrl: (url: string) => Promise<UrlVerdict>,
): Promise<Sent> {
  let verdict: UrlVerdict;
  try {
    verdict = await checkUrl(target.url);
  } catch (error) {
    if (error instanceof DnsError) return failed(null, 'The receiver’s host name could not be looked up right now');
    throw error;
  }
  if (!verdict.ok) return { responseStatus: null, ok: false, error: `The URL is refused: ${verdict.reason}`, final: true };

  let response: Response;
  try {
    response = await fetch(verdict.url, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.timeout(RECEIVER_TIMEOUT_MS),
      headers: {
        'content-type': 'application/json',
        'user-agent': 'rag-service-webhooks/0.1',
        [EVENT_HEADER]: target.event,
        [DELIVERY_HEADER]: target.deliveryId,
        ...(await signatureHeaders(target.secret, { id: target.deliveryId, body: target.payload })),
      },
      body: target.payload,
    });
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
    return failed(
      null,
      timedOut ? `The receiver did not answer within ${RECEIVER_TIMEOUT_MS / 1000} s` : 'The receiver could not be reached',
    );
  }
  await response.body?.cancel().catch(() => {});
  const status = response.status;
  if (status >= 200 && status <= 299) return { responseStatus: status, ok: true, error: null, final: false };
  if (status >= 300 && status <= 399)
    return failed(status, `The receiver answered with a redirect (HTTP ${status}), which is not followed`);
  return failed(status, `The receiver answered HTTP ${status}`);
}

const failed = (responseStatus: number | null, error: string): Sent => ({ responseStatus, ok: false, error, final: false });
