import { Client } from '@upstash/qstash';
import { describeCause, UpstreamError } from './upstream-error.ts';

export interface QueueSettings {
  /** https://qstash.upstash.io, or the devstack's. */
  url: string;
  token: string;
  /**
   * QStash's flow control, applied to each flow-control key: at most `parallelism` of a key's
   * deliveries under way at once; the rest wait in QStash, and other keys are not held back.
   * Unset: a message's key is ignored.
   */
  flowControl?: { parallelism: number };
}

export interface QueuedMessage<T> {
  /** The worker endpoint that receives it. */
  destination: string;
  body: T;
  /** QStash drops a second message with the same id, so re-publishing is safe. */
  deduplicationId: string;
  /** Called by QStash when every retry has failed, so no job is left waiting forever. */
  failureCallback?: string;
  retries?: number;
  /** Messages of one key share QueueSettings.flowControl's limits (letters, digits, '-', '_', '.'). */
  flowControlKey?: string;
}

/** QStash: at-least-once delivery of JSON to a worker URL, with retries and backoff. */
export interface Queue {
  publish<T>(messages: QueuedMessage<T>[]): Promise<void>;
  /**
   * Resolves when QStash answered lately (a publish or a check within READY_FOR_MS), else asks
   * it with one small authenticated GET; throws UpstreamError('queue') when it cannot. Lets a
   * caller refuse work (an upload's body) before doing it, when the queue is down.
   */
  ready(): Promise<void>;
}

const BATCH = 100;
/** How long a successful call vouches for the queue. */
const READY_FOR_MS = 30_000;
const CHECK_TIMEOUT_MS = 5_000;

export function createQueue(settings: QueueSettings): Queue {
  const client = new Client({ baseUrl: settings.url, token: settings.token, retry: { retries: 2 } });
  // Per isolate, like the client. Not a shared in-flight promise: workerd does not let one
  // request wait on another's I/O.
  let answeredAt = Number.NEGATIVE_INFINITY;
  return {
    async ready() {
      if (Date.now() - answeredAt < READY_FOR_MS) return;
      // GET /v2/keys: the smallest authenticated read QStash has; the keys themselves are not used.
      const response = await fetch(`${settings.url.replace(/\/+$/, '')}/v2/keys`, {
        headers: { authorization: `Bearer ${settings.token}` },
        signal: AbortSignal.timeout(CHECK_TIMEOUT_MS),
      }).catch((cause: unknown) => {
        throw new UpstreamError('queue', `check: ${describeCause(cause)}`, { cause });
      });
      await response.body?.cancel();
      if (!response.ok) throw new UpstreamError('queue', `check: HTTP ${response.status}`);
      answeredAt = Date.now();
    },
    async publish(messages) {
      try {
        for (let i = 0; i < messages.length; i += BATCH) {
          await client.batchJSON(
            messages.slice(i, i + BATCH).map((message) => ({
              url: message.destination,
              body: message.body,
              deduplicationId: message.deduplicationId,
              failureCallback: message.failureCallback,
              retries: message.retries ?? 3,
              ...(message.flowControlKey && settings.flowControl
                ? { flowControl: { key: message.flowControlKey, parallelism: settings.flowControl.parallelism } }
                : {}),
            })),
          );
        }
        answeredAt = Date.now();
      } catch (error) {
        answeredAt = Number.NEGATIVE_INFINITY;
        throw new UpstreamError('queue', `publish: ${describeCause(error)}`, { cause: error });
      }
    },
  };
}
