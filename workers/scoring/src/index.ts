import { z } from 'zod';
import { adaptersFor } from '#core/adapters/index.ts';
import { createEvaluationsDb } from '#core/db/scoring.ts';
import { SCORE_FAILURE_PATH, SCORE_PATH, SCORE_RETRIES, type ScoreMessage } from '#core/messages/scoring.ts';
import { createQStashWorker } from '#core/qstash/worker-shell.ts';
import { createScorer } from './choose-scorer.ts';
import { loadScoringConfig } from './config.ts';
import { recordFailedScoring, type ScoringDeps, scoreEvaluation } from './score.ts';

const Message = z.object({ evaluation_id: z.uuid() }) satisfies z.ZodType<ScoreMessage>;

export default createQStashWorker({
  loadConfig: loadScoringConfig,
  signing: (config) => ({
    workerUrl: config.SCORING_WORKER_URL,
    currentSigningKey: config.QSTASH_CURRENT_SIGNING_KEY,
    nextSigningKey: config.QSTASH_NEXT_SIGNING_KEY,
  }),
  deps: (config, sql): ScoringDeps => ({
    db: createEvaluationsDb(sql),
    scorer: createScorer(config, adaptersFor(config).models),
  }),
  routes: {
    [SCORE_PATH]: {
      message: Message,
      refusal: 'Not a scoring message',
      retries: SCORE_RETRIES,
      handle: async (deps, message, attempt) => ({ outcome: await scoreEvaluation(deps, message.evaluation_id, attempt) }),
    },
  },
  failures: {
    path: SCORE_FAILURE_PATH,
    message: Message,
    refusal: 'Not a failure callback for a scoring message',
    handle: async (deps, message, attempts) => ({ outcome: await recordFailedScoring(deps, message.evaluation_id, attempts) }),
  },
  retryDetail: 'Scoring failed; it will be retried',
  logLabel: 'scoring failed:',
});
