import { z } from 'zod';
import type { ModelUsage } from '#core/adapters/models.ts';
import type { EvaluationsDb, StoredEvaluation } from '#core/db/scoring.ts';
import type { UsageRepo } from '#core/db/usage.ts';
import type { Logger } from '#core/log.ts';
import type { Scorer } from './choose-scorer.ts';
import type { ScoreInput } from './evals/lexical-scorer.ts';

export interface ScoringDeps {
  db: EvaluationsDb;
  scorer: Scorer;
  /** Where the scoring's model usage is recorded, under the answer's user and collection; unset: not recorded. */
  usage?: Pick<UsageRepo, 'recordForEvaluation'>;
  /** This delivery's logger; unset (unit tests): failures to record usage go unlogged. */
  log?: Logger;
}

export type Outcome = 'scored' | 'skipped' | 'failed';

// Source objects carry more (source, chunk_index, score, …); only the text is scored.
const ScoreRow = z.object({
  question: z.string(),
  answer: z.string(),
  sources: z.array(z.looseObject({ text: z.string() })),
});

const MALFORMED = 'The evaluation record could not be scored: its question, answer or sources are malformed';

/** The message users see; the cause stays in the log. */
export function failedAfter(attempts?: number): string {
  if (!attempts || attempts < 1) return 'Scoring failed after repeated attempts';
  return `Scoring failed after ${attempts} ${attempts === 1 ? 'attempt' : 'attempts'}`;
}

/**
 * Scores one evaluation record and stores the result. Returning means "done, do not retry";
 * a scorer failure throws, so that QStash retries it, and once every attempt has failed its
 * failure callback records it (recordFailedScoring). A record that is gone or already scored is
 * left alone, so duplicate deliveries change nothing.
 */
export async function scoreEvaluation(deps: ScoringDeps, id: string): Promise<Outcome> {
  const row = await deps.db.load(id);
  if (!row || row.scored_at !== null) return 'skipped';
  const input = scoreInput(row);
  // No retry can repair the stored data.
  if (!input) return (await deps.db.saveError(id, deps.scorer.name, MALFORMED)) ? 'failed' : 'skipped';

  // A failure's own words (they may quote the prompt or name internal hosts) stay in the log.
  const usage: ModelUsage[] = [];
  const scores = await deps.scorer.score(input, (u) => usage.push(u));
  if (!(await deps.db.saveScores(id, scores, deps.scorer.name))) return 'skipped';
  // Recorded once the scores are kept, so that a redelivery that scores again is not counted twice; an
  // attempt that failed is not recorded at all. Its failure is logged: the scores stand.
  await deps.usage
    ?.recordForEvaluation(id, usage, deps.log?.requestId ?? null)
    .catch((error: unknown) => deps.log?.error('usage_not_recorded', error, { evaluation_id: id }));
  return 'scored';
}

/** QStash's failure callback: every attempt failed, so mark the record now. */
export async function recordFailedScoring(deps: ScoringDeps, id: string, attempts?: number): Promise<Outcome> {
  return (await deps.db.saveError(id, deps.scorer.name, failedAfter(attempts))) ? 'failed' : 'skipped';
}

function scoreInput(row: StoredEvaluation): ScoreInput | undefined {
  const parsed = ScoreRow.safeParse(row);
  return parsed.success ? parsed.data : undefined;
}
