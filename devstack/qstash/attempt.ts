import { dropUndefined } from './drop-undefined.ts';
import { headerLists } from './headers.ts';
import { newMessageId } from './ids.ts';
import { signDelivery } from './signature.ts';
import type { CallbackSpec, DeliveryResponse, StoredMessage } from './types.ts';

/** How one attempt ended: the destination's response, or why there was none. */
export interface Outcome {
  response?: DeliveryResponse;
  error?: string;
}

/**
 * One signed HTTP request to a message's destination, as QStash sends it. Aborting `controller`
 * (a cancel, a stop) ends it early; the timeout aborts it too and is the reason reported.
 */
export async function attemptDelivery(
  message: StoredMessage,
  signingKey: string,
  defaultTimeoutMs: number,
  controller: AbortController,
): Promise<Outcome> {
  const timeoutMs = message.timeoutMs ?? defaultTimeoutMs;
  const timer = setTimeout(() => controller.abort(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
  try {
    // fetch refuses a body on GET; the signature then covers the empty body actually sent.
    const body = message.method === 'GET' ? new Uint8Array() : new Uint8Array(Buffer.from(message.body, 'base64'));
    const headers = new Headers(message.headers);
    headers.set('User-Agent', 'Upstash-QStash');
    headers.set('Upstash-Message-Id', message.messageId);
    headers.set('Upstash-Retried', String(message.retried));
    headers.set('Upstash-Signature', await signDelivery(signingKey, message.url, body));
    const response = await fetch(message.url, {
      method: message.method,
      headers,
      body: message.method === 'GET' ? undefined : body,
      signal: controller.signal,
    });
    const responseBody = Buffer.from(await response.arrayBuffer());
    return {
      response: { status: response.status, headers: headerLists(response.headers), body: responseBody.toString('base64') },
    };
  } catch (error) {
    const reason = controller.signal.aborted ? controller.signal.reason : error;
    return { error: describeError(reason) };
  } finally {
    clearTimeout(timer);
  }
}

/** Callbacks are messages of their own: signed, retried, and dead-lettered like any other. */
export function callbackMessage(
  source: StoredMessage,
  spec: CallbackSpec,
  origin: StoredMessage['origin'],
  payload: object,
): StoredMessage {
  const now = Date.now();
  return dropUndefined({
    messageId: newMessageId(),
    url: spec.url,
    method: spec.method,
    headers: { 'Content-Type': 'application/json', ...spec.headers },
    body: Buffer.from(JSON.stringify(payload)).toString('base64'),
    maxRetries: spec.retries ?? source.maxRetries,
    retried: 0,
    createdAt: now,
    notBefore: now + (spec.delayMs ?? 0),
    timeoutMs: spec.timeoutMs,
    origin,
  });
}

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}
