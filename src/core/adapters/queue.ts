import { Client } from '@upstash/qstash';
import { describeCause, UpstreamError } from './upstream-error.ts';

export interface QueueSettings {
  /** https://qstash.upstash.io, or the devstack's. */
  url: string;
  token: string;
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
}

/** QStash: at-least-once delivery of JSON to a worker URL, with retries and backoff. */
export interface Queue {
  publish<T>(messages: QueuedMessage<T>[]): Promise<void>;
}

const BATCH = 100;

export function createQueue(settings: QueueSettings): Queue {
  const client = new Client({ baseUrl: settings.url, token: settings.token, retry: { retries: 2 } });
  return {
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
            })),
          );
        }
      } catch (error) {
        throw new UpstreamError('queue', `publish: ${describeCause(error)}`, { cause: error });
      }
    },
  };
}
