import { dropUndefined } from './drop-undefined.ts';
import { asLists } from './headers.ts';
import type { DeliveryResponse, DlqEntry, StoredMessage } from './types.ts';

// The JSON shapes of QStash's API, as @upstash/qstash's Message and DlqMessage types read them.

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** QStash gives a body as text when it is UTF-8, else as base64 under another name. */
function textOrBase64(base64: string): { text?: string; base64?: string } {
  try {
    return { text: utf8.decode(Buffer.from(base64, 'base64')) };
  } catch {
    return { base64 };
  }
}

export function messagePayload(message: StoredMessage) {
  const body = textOrBase64(message.body);
  const labels = message.label?.split(',').filter(Boolean);
  return dropUndefined({
    messageId: message.messageId,
    url: message.url,
    method: message.method,
    header: asLists(message.headers),
    body: body.text,
    bodyBase64: body.base64,
    maxRetries: message.maxRetries,
    retryDelayExpression: message.retryDelay,
    notBefore: message.notBefore,
    createdAt: message.createdAt,
    callback: message.callback?.url,
    failureCallback: message.failureCallback?.url,
    callerIp: message.callerIp,
    flowControlKey: message.flowControl?.key,
    parallelism: message.flowControl?.parallelism,
    rate: message.flowControl?.rate,
    period: message.flowControl?.rate ? Math.round((message.flowControl.periodMs ?? 1000) / 1000) : undefined,
    label: labels?.[0],
    labels,
  });
}

export function dlqPayload(entry: DlqEntry) {
  const response = entry.response ? textOrBase64(entry.response.body) : undefined;
  return dropUndefined({
    ...messagePayload(entry.message),
    dlqId: entry.dlqId,
    responseStatus: entry.response?.status,
    responseHeader: entry.response?.headers,
    responseBody: response?.text,
    responseBodyBase64: response?.base64,
  });
}

/**
 * The body QStash posts to Upstash-Callback after an attempt, and to
 * Upstash-Failure-Callback (with dlqId) when retries run out. A failure without any
 * HTTP response (refused, timed out) reports status 0 and an empty body.
 */
export function callbackPayload(source: StoredMessage, retried: number, response: DeliveryResponse | undefined, dlqId?: string) {
  return dropUndefined({
    status: response?.status ?? 0,
    header: response?.headers ?? {},
    body: response?.body ?? '',
    retried,
    maxRetries: source.maxRetries,
    dlqId,
    sourceMessageId: source.messageId,
    url: source.url,
    method: source.method,
    sourceHeader: asLists(source.headers),
    sourceBody: source.body,
    notBefore: source.notBefore,
    createdAt: source.createdAt,
    callerIP: source.callerIp,
  });
}
