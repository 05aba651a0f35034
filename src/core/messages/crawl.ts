import type { QueuedMessage } from '../adapters/queue.ts';
import { FAILURE_PATH } from './ingest.ts';
import type { Traced } from './request-id.ts';

/**
 * One step of a source's sync: the next pages of its frontier, fetched politely. Each step queues
 * the next, so a crawl of 2,000 pages is many short invocations, and its state lives in Postgres
 * (src/core/db/source-pages.ts): a worker restarted mid-crawl picks up from the rows.
 */
export interface CrawlMessage extends Traced {
  run_id: string;
  step: number;
}

export const CRAWL_PATH = '/crawl';
export const CRAWL_RETRIES = 3;

/** `attempt` differs when the cron queues a step again whose message was lost, so that QStash does not drop it as a duplicate. */
export function crawlMessage(workerUrl: string, message: CrawlMessage, attempt = 0): QueuedMessage<CrawlMessage> {
  const base = workerUrl.replace(/\/+$/, '');
  return {
    destination: `${base}${CRAWL_PATH}`,
    body: message,
    deduplicationId: `crawl-${message.run_id}-${message.step}${attempt ? `-${attempt}` : ''}`,
    failureCallback: `${base}${FAILURE_PATH}`,
    retries: CRAWL_RETRIES,
  };
}
