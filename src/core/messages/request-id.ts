import type { Queue } from '../adapters/queue.ts';
import { decodeBase64Text } from '../bytes.ts';

/**
 * Every QStash message may carry the id of the request that caused it, so that an upload's steps, its
 * webhooks and its answer's scoring log the id the API logged. Optional: messages queued before it
 * existed, and those a sweep queues, have none (the worker then makes one).
 */
export interface Traced {
  request_id?: string;
}

/** What a request id may be: Hono's request-id middleware takes a client's X-Request-Id of this shape. */
const REQUEST_ID = /^[A-Za-z0-9_\-=.]{1,255}$/;

/**
 * The request id a delivery's body carries: the message's own, or, for a failure callback, the one in
 * the message it reports on (base64 in `sourceBody`).
 */
export function requestIdOf(body: string): string | undefined {
  const parsed = parseObject(body);
  const own = parsed?.request_id;
  if (typeof own === 'string' && REQUEST_ID.test(own)) return own;
  if (typeof parsed?.sourceBody === 'string') return requestIdOf(decodeBase64Text(parsed.sourceBody));
  return undefined;
}

/** The ids a message names, for its log lines: its job, run, evaluation or delivery. */
export function messageIds(body: string): Record<string, string> {
  let parsed = parseObject(body);
  if (typeof parsed?.sourceBody === 'string') parsed = parseObject(decodeBase64Text(parsed.sourceBody));
  const ids: Record<string, string> = {};
  for (const field of ['job_id', 'run_id', 'evaluation_id', 'delivery_id']) {
    const value = parsed?.[field];
    if (typeof value === 'string' && value.length <= 64) ids[field] = value;
  }
  return ids;
}

/** The queue, with `request_id` added to every message body that is an object and has none. */
export function tracedQueue(queue: Queue, requestId: string): Queue {
  return {
    ready: () => queue.ready(),
    publish: (messages) =>
      queue.publish(
        messages.map((message) =>
          typeof message.body === 'object' && message.body !== null && !('request_id' in message.body)
            ? { ...message, body: { ...message.body, request_id: requestId } }
            : message,
        ),
      ),
  };
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
