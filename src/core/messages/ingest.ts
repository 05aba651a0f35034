import type { Traced } from './request-id.ts';

/**
 * The ingest pipeline's QStash messages. Each is one bounded step, so no single
 * worker invocation goes past its memory or CPU budget: extract the document into
 * chunk rows, then embed and upsert batches of chunks; the last batch finalizes.
 * Each carries the upload's request id (Traced), added by the queue it is published on.
 */
export type IngestMessage = (
  | { job_id: string; step: 'extract'; from_page?: number }
  | { job_id: string; step: 'embed'; from: number; to: number }
) &
  Traced;

/** Paths of the ingest worker. */
export const STEP_PATH = '/steps';
export const FAILURE_PATH = '/failures';

/** QStash retries a failed step this many times, with its exponential backoff, before the failure callback. */
export const STEP_RETRIES = 3;

/**
 * The QStash flow-control key of one person's ingestion: every step of every document they upload, in
 * any collection, shares it, so that one person's files take at most the parallelism set per key
 * (INGEST_PARALLELISM_PER_USER) and never hold back anyone else's. Per person rather than per
 * collection: more collections would not buy more of the queue, and the members of one shared
 * collection do not wait for each other. QStash allows letters, digits, '-', '_' and '.' in a key.
 */
export function ingestFlowKey(userId: string): string {
  return `ingest-${userId.replace(/[^A-Za-z0-9._-]/g, '_')}`;
}

/** A step of the job of a document that `userId` uploaded. */
export function stepMessage(workerUrl: string, message: IngestMessage, userId: string) {
  const base = workerUrl.replace(/\/+$/, '');
  return {
    destination: `${base}${STEP_PATH}`,
    body: message,
    deduplicationId:
      message.step === 'extract'
        ? `${message.job_id}-extract-${message.from_page ?? 1}`
        : `${message.job_id}-embed-${message.from}-${message.to}`,
    failureCallback: `${base}${FAILURE_PATH}`,
    retries: STEP_RETRIES,
    flowControlKey: ingestFlowKey(userId),
  };
}
