import type { Models } from '#core/adapters/models.ts';
import { judgeScores, lexicalScores, type ScoreInput, type Scores } from '#core/evals/lexical-scorer.ts';
import type { ScoringConfig } from './config.ts';

/** One way of scoring, and the name it is recorded under in evaluations.scorer. */
export interface Scorer {
  name: string;
  score(input: ScoreInput): Promise<Scores>;
}

/** The judge model when one is configured, else the lexical scorer (with embeddings when there is a model for them). */
export function createScorer(config: ScoringConfig, models: Models): Scorer {
  if (config.JUDGE_MODEL) {
    const model = models.languageModel(config.JUDGE_MODEL);
    return { name: `judge:${config.JUDGE_MODEL}`, score: (input) => judgeScores(input, model) };
  }
  const { embed } = models;
  if (embed) return { name: 'lexical+embeddings', score: (input) => lexicalScores(input, { embed }) };
  return { name: 'lexical', score: (input) => lexicalScores(input) };
}
