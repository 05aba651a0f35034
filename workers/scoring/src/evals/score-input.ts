/** An answered question, as both scorers take it. */
export interface ScoreInput {
  question: string;
  answer: string;
  sources: { text: string }[];
}

/** Rows come from the database and the queue, not the type checker: a wrong shape is named, not crashed on. */
export function checkScoreInput(input: ScoreInput): void {
  if (typeof input?.question !== 'string') throw new TypeError('Score input needs a question string');
  if (typeof input.answer !== 'string') throw new TypeError('Score input needs an answer string');
  if (!Array.isArray(input.sources) || input.sources.some((source) => typeof source?.text !== 'string')) {
    throw new TypeError('Score input sources must be objects with a text string');
  }
}

/** Into [0, 1]; a non-number (a judge's NaN) counts as 0. */
export function clampScore(value: number): number {
  return Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0;
}
