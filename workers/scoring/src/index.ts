import { z } from 'zod';
import { adaptersFor } from '#core/adapters/index.ts';
import { createEvaluationsDb } from '#core/db/scoring.ts';
import { createSweepsDb } from '#core/db/sweeps.ts';
import { createUsageRepo } from '#core/db/usage.ts';
import { tracedQueue } from '#core/messages/request-id.ts';
import { SCORE_FAILURE_PATH, SCORE_PATH, type ScoreMessage } from '#core/messages/scoring.ts';
import { createQStashWorker, type QStashWorker, sweepOnSchedule } from '#core/qstash/worker-shell.ts';
import { createScorer } from './choose-scorer.ts';
import { loadScoringConfig, type ScoringConfig } from './config.ts';
import { recordFailedScoring, scoreEvaluation } from './score.ts';
import { type SweepDeps, sweepUnscored } from './sweep.ts';

const Message = z.object({ evaluation_id: z.uuid() }) satisfies z.ZodType<ScoreMessage>;

const worker: QStashWorker<ScoringConfig, SweepDeps, ScoreMessage, Env> = {
  loadConfig: loadScoringConfig,
  signing: (config) => ({
    workerUrl: config.SCORING_WORKER_URL,
    currentSigningKey: config.QSTASH_CURRENT_SIGNING_KEY,
    nextSigningKey: config.QSTASH_NEXT_SIGNING_KEY,
  }),
  deps: (config, sql, log) => {
    const { models, queue } = adaptersFor(config);
    return {
      db: createEvaluationsDb(sql),
      scorer: createScorer(config, models),
      usage: createUsageRepo(sql),
      sweeps: createSweepsDb(sql),
      queue: queue && tracedQueue(queue, log.requestId),
      log,
      workerUrl: config.SCORING_WORKER_URL,
      afterMinutes: config.SCORING_SWEEP_AFTER_MINUTES,
    };
  },
  routes: {
    [SCORE_PATH]: {
      message: Message,
      refusal: 'Not a scoring message',
      handle: async (deps, message) => ({ outcome: await scoreEvaluation(deps, message.evaluation_id) }),
    },
  },
  failures: {
    path: SCORE_FAILURE_PATH,
    message: Message,
    refusal: 'Not a failure callback for a scoring message',
    handle: async (deps, message, ending) => ({
      outcome: await recordFailedScoring(deps, message.evaluation_id, ending.attempts),
    }),
  },
  retryDetail: 'Scoring failed; it will be retried',
  name: 'scoring',
};

const app = createQStashWorker(worker);

/** QStash delivers the answers to score; the cron picks up those whose scoring was lost (sweep.ts). */
export default { fetch: app.fetch, scheduled: sweepOnSchedule(worker, sweepUnscored) } satisfies ExportedHandler<Env>;
