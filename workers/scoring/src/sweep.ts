import type { Queue } from '#core/adapters/queue.ts';
import type { SweepsDb } from '#core/db/sweeps.ts';
import type { Logger } from '#core/log.ts';
import { scoreMessage } from '#core/messages/scoring.ts';
import type { ScoringDeps } from './score.ts';
import { failedAfter } from './score.ts';

/** Queued again this many times without a score, an answer records a scorer error instead. */
export const MAX_SWEEPS = 3;
const BATCH = 100;

export interface SweepDeps extends ScoringDeps {
  sweeps: SweepsDb;
  /** Null without QSTASH_TOKEN: lost answers are then recorded as failed at once. */
  queue: Queue | null;
  workerUrl: string;
  afterMinutes: number;
  log: Logger;
}

/**
 * The cron sweep: an answer left unscored (the queue was down when it was recorded, or its failure
 * callback was lost) is queued for scoring again, later each time; after MAX_SWEEPS it is marked
 * as failed, so no record waits for ever.
 */
export async function sweepUnscored(deps: SweepDeps) {
  const stale = await deps.sweeps.staleEvaluations(deps.afterMinutes, BATCH);
  const requeue = [];
  for (const { id, sweeps } of stale) {
    if (sweeps > MAX_SWEEPS || !deps.queue) await deps.db.saveError(id, deps.scorer.name, failedAfter());
    else requeue.push(scoreMessage(deps.workerUrl, id));
  }
  if (deps.queue && requeue.length > 0) await deps.queue.publish(requeue);
  if (stale.length > 0) deps.log.info('sweep_unscored', { queued: requeue.length, failed: stale.length - requeue.length });
  return { swept: stale.length };
}
