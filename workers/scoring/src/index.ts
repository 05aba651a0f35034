import { Receiver } from '@upstash/qstash';
import { Hono } from 'hono';
import { z } from 'zod';
import { connect } from '../../../src/db/client.ts';
import { AppError } from '../../../src/errors.ts';
import { SCORE_FAILURE_PATH, SCORE_PATH, SCORE_RETRIES, type ScoreMessage } from '../../../src/evals/messages.ts';
import { loadScoringConfig, type ScoringConfig } from './config.ts';
import { createEvaluationsDb } from './evaluations-db.ts';
import { type Outcome, recordFailedScoring, type ScoringDeps, scoreEvaluation } from './score.ts';
import { createScorer } from './scorer.ts';

const Message = z.object({ evaluation_id: z.uuid() }) satisfies z.ZodType<ScoreMessage>;

/** QStash's failure callback carries the original message base64-encoded, and how often it was retried. */
const FailureCallback = z.object({ sourceBody: z.string(), retried: z.number().int().min(0).optional() });

type WorkerEnv = { Bindings: Record<string, unknown>; Variables: { config: ScoringConfig; body: string } };

const app = new Hono<WorkerEnv>();

app.get('/health', (c) => c.json({ ok: true }));

/** Every delivery must carry a valid QStash signature for this URL and this exact body. */
app.use('*', async (c, next) => {
  if (c.req.method !== 'POST') return next();
  const config = loadScoringConfig(c.env);
  const body = await c.req.text();
  const receiver = new Receiver({
    currentSigningKey: config.QSTASH_CURRENT_SIGNING_KEY,
    nextSigningKey: config.QSTASH_NEXT_SIGNING_KEY,
  });
  const signature = c.req.header('upstash-signature');
  const url = `${config.SCORING_WORKER_URL.replace(/\/+$/, '')}${new URL(c.req.url).pathname}`;
  const valid = signature ? await receiver.verify({ signature, body, url }).catch(() => false) : false;
  if (!valid) return c.json({ detail: 'Invalid or missing QStash signature' }, 401);
  c.set('config', config);
  c.set('body', body);
  return next();
});

app.post(SCORE_PATH, async (c) => {
  const message = parse(Message, c.var.body);
  if (!message) return c.json({ detail: 'Not a scoring message' }, 400);
  const retried = Number.parseInt(c.req.header('upstash-retried') ?? '0', 10) || 0;
  const outcome = await withDeps(c.var.config, c.executionCtx, (deps) =>
    scoreEvaluation(deps, message.evaluation_id, { number: retried + 1, final: retried >= SCORE_RETRIES }),
  );
  return c.json({ ok: true, outcome } satisfies { ok: true; outcome: Outcome });
});

app.post(SCORE_FAILURE_PATH, async (c) => {
  const callback = parse(FailureCallback, c.var.body);
  const message = callback && parse(Message, decodeBase64(callback.sourceBody));
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

function parse<T>(schema: z.ZodType<T>, text: string): T | undefined {
  try {
    const result = schema.safeParse(JSON.parse(text));
    return result.success ? result.data : undefined;
  } catch {
    return undefined;
  }
}

function decodeBase64(value: string): string {
  try {
    return new TextDecoder().decode(Uint8Array.from(atob(value), (ch) => ch.charCodeAt(0)));
  } catch {
    return '';
  }
}

export default app;
