import type { QueuedMessage } from '../adapters/queue.ts';
import type { Traced } from './request-id.ts';

/** What QStash delivers to the scoring worker once an answer is recorded. */
export interface ScoreMessage extends Traced {
  evaluation_id: string;
}

/** Paths of the scoring worker. */
export const SCORE_PATH = '/score';
export const SCORE_FAILURE_PATH = '/failures';

/** QStash retries a failed scoring this many times, with its exponential backoff, before the failure callback. */
export const SCORE_RETRIES = 3;

/** The message that asks the scoring worker to score one evaluation record; publishing it twice is harmless. */
export function scoreMessage(workerUrl: string, evaluationId: string): QueuedMessage<ScoreMessage> {
  const base = workerUrl.replace(/\/+$/, '');
  return {
    destination: `${base}${SCORE_PATH}`,
    body: { evaluation_id: evaluationId },
    deduplicationId: `score-${evaluationId}`,
    failureCallback: `${base}${SCORE_FAILURE_PATH}`,
    retries: SCORE_RETRIES,
  };
}
