/**
 * The ingest pipeline's QStash messages. Each is one bounded step, so no single
 * worker invocation goes past its memory or CPU budget: extract the document into
 * chunk rows, then embed and upsert batches of chunks; the last batch finalizes.
 */
export type IngestMessage =
  | { job_id: string; step: 'extract'; from_page?: number }
  | { job_id: string; step: 'embed'; from: number; to: number };

/** Paths of the ingest worker. */
export const STEP_PATH = '/steps';
export const FAILURE_PATH = '/failures';

/** QStash retries a failed step this many times, with its exponential backoff, before the failure callback. */
export const STEP_RETRIES = 3;

export function stepMessage(workerUrl: string, message: IngestMessage) {
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
  };
}
