import { Hono } from 'hono';
import { z } from 'zod';
import { connect } from '#core/db/client.ts';
import { createEvaluationsDb } from '#core/db/scoring.ts';
import { AppError } from '#core/errors.ts';
import { SCORE_FAILURE_PATH, SCORE_PATH, SCORE_RETRIES, type ScoreMessage } from '#core/messages/scoring.ts';
import { decodeSourceBody, parseMessage, verifyDeliveries } from '#core/qstash/worker-shell.ts';
import { createScorer } from './choose-scorer.ts';
import { loadScoringConfig, type ScoringConfig } from './config.ts';
import { type Outcome, recordFailedScoring, type ScoringDeps, scoreEvaluation } from './score.ts';

const Message = z.object({ evaluation_id: z.uuid() }) satisfies z.ZodType<ScoreMessage>;

/** QStash's failure callback carries the original message base64-encoded, and how often it was retried. */
const FailureCallback = z.object({ sourceBody: z.string(), retried: z.number().int().min(0).optional() });

type WorkerEnv = { Bindings: Record<string, unknown>; Variables: { config: ScoringConfig; body: string } };

const app = new Hono<WorkerEnv>();

app.get('/health', (c) => c.json({ ok: true }));

app.use(
  '*',
  verifyDeliveries<WorkerEnv>(
    (env) => {
      const config = loadScoringConfig(env);
      return {
        workerUrl: config.SCORING_WORKER_URL,
        currentSigningKey: config.QSTASH_CURRENT_SIGNING_KEY,
        nextSigningKey: config.QSTASH_NEXT_SIGNING_KEY,
      };
    },
    (c) => c.set('config', loadScoringConfig(c.env)),
  ),
);

app.post(SCORE_PATH, async (c) => {
  const message = parseMessage(Message, c.var.body);
  if (!message) return c.json({ detail: 'Not a scoring message' }, 400);
  const retried = Number.parseInt(c.req.header('upstash-retried') ?? '0', 10) || 0;
  const outcome = await withDeps(c.var.config, c.executionCtx, (deps) =>
    scoreEvaluation(deps, message.evaluation_id, { number: retried + 1, final: retried >= SCORE_RETRIES }),
  );
  return c.json({ ok: true, outcome } satisfies { ok: true; outcome: Outcome });
});

app.post(SCORE_FAILURE_PATH, async (c) => {
  const callback = parseMessage(FailureCallback, c.var.body);
  const message = callback && parseMessage(Message, decodeSourceBody(callback.sourceBody));
  if (!message) return c.json({ detail: 'Not a failure callback for a scoring message' }, 400);
  const attempts = callback.retried === undefined ? undefined : callback.retried + 1;
  const outcome = await withDeps(c.var.config, c.executionCtx, (deps) =>
    recordFailedScoring(deps, message.evaluation_id, attempts),
  );
  return c.json({ ok: true, outcome } satisfies { ok: true; outcome: Outcome });
});

app.onError((error, c) => {
  // A non-2xx makes QStash retry; the details stay in the log.
  console.error('scoring failed:', error);
  if (error instanceof AppError && error.code === 'misconfigured') return c.json({ detail: error.detail }, 500);
  return c.json({ detail: 'Scoring failed; it will be retried' }, 500);
});

async function withDeps<T>(
  config: ScoringConfig,
  ctx: { waitUntil(promise: Promise<unknown>): void },
  run: (deps: ScoringDeps) => Promise<T>,
): Promise<T> {
  const sql = connect(config.HYPERDRIVE.connectionString);
  try {
    return await run({ db: createEvaluationsDb(sql), scorer: createScorer(config) });
  } finally {
    ctx.waitUntil(sql.end({ timeout: 5 }));
  }
}

export default app;
