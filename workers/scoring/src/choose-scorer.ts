import { createOpenAI } from '@ai-sdk/openai';
import { createModels } from '#core/adapters/models.ts';
import { judgeScores, lexicalScores, type ScoreInput, type Scores } from '#core/evals/lexical-scorer.ts';
import type { ScoringConfig } from './config.ts';

/** One way of scoring, and the name it is recorded under in evaluations.scorer. */
export interface Scorer {
  name: string;
  score(input: ScoreInput): Promise<Scores>;
}

/** The judge model when one is configured, else the lexical scorer (with embeddings when there is a model for them). */
export function createScorer(config: ScoringConfig): Scorer {
  if (config.JUDGE_MODEL) {
    const model = createOpenAI({ baseURL: config.OPENAI_BASE_URL, apiKey: config.OPENAI_API_KEY }).chat(config.JUDGE_MODEL);
    return { name: `judge:${config.JUDGE_MODEL}`, score: (input) => judgeScores(input, model) };
  }
  const { embed } = createModels({
    baseUrl: config.OPENAI_BASE_URL,
    apiKey: config.OPENAI_API_KEY,
    embeddingModel: config.EMBEDDING_MODEL,
    embeddingDimensions: config.EMBEDDING_DIMENSIONS,
  });
  if (embed) return { name: 'lexical+embeddings', score: (input) => lexicalScores(input, { embed }) };
  return { name: 'lexical', score: (input) => lexicalScores(input) };
}
