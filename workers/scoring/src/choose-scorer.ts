import type { Models, UsageSink } from '#core/adapters/models.ts';
import type { CitationScores, Scores } from '#core/db/scoring.ts';
import type { ScoringConfig } from './config.ts';
import { checkCitationsLexically, citationSupport, judgeCitations } from './evals/citations.ts';
import { judgeScores, lexicalScores, type ScoreInput } from './evals/lexical-scorer.ts';

/** One way of scoring, and the name it is recorded under in evaluations.scorer. */
export interface Scorer {
  name: string;
  /** `onUsage` hears of every model call the scoring made (the judge's, or the embeddings'). */
  score(input: ScoreInput, onUsage?: UsageSink): Promise<Scores & CitationScores>;
}

const withSupport = (citations: CitationScores['citations']): CitationScores => ({
  citations,
  citation_support_score: citationSupport(citations),
});

/**
 * The judge model when one is configured, else the lexical scorer (with embeddings when there is
 * a model for them). The same choice checks the answer's citations.
 */
export function createScorer(config: ScoringConfig, models: Models): Scorer {
  const model = models.judge;
  if (config.JUDGE_MODEL && model) {
    return {
      name: `judge:${config.JUDGE_MODEL}`,
      score: async (input, onUsage) => {
        const [scores, citations] = await Promise.all([
          judgeScores(input, model, onUsage),
          judgeCitations(input.answer, input.sources, model, onUsage),
        ]);
        return { ...scores, ...withSupport(citations) };
      },
    };
  }
  const { embed } = models;
  const lexical = async (input: ScoreInput, options: Parameters<typeof lexicalScores>[1]) => ({
    ...(await lexicalScores(input, options)),
    ...withSupport(checkCitationsLexically(input.answer, input.sources)),
  });
  if (embed)
    return {
      name: 'lexical+embeddings',
      score: (input, onUsage) => lexical(input, { embed: (texts) => embed(texts, onUsage) }),
    };
  return { name: 'lexical', score: (input) => lexical(input, {}) };
}
