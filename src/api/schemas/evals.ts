import { z } from '@hono/zod-openapi';
import { MAX_FEEDBACK_COMMENT } from '#core/limits.ts';
import { Id, pageQuery, pathParam, Timestamp, text } from './common.ts';

const Score = z.number().min(0).max(1);
const Millis = z.number().int();
const MeanMillis = z.number().nullable().openapi({ description: 'Milliseconds; null when the window has no rows' });

export const EvalListQuery = z.object(pageQuery(50));

const Rating = z.enum(['up', 'down']);
const feedbackFields = {
  feedback: Rating.nullable().openapi({
    description: 'What the asker thought of the answer (`PUT …/feedback`); null until rated',
  }),
  feedback_comment: z.string().nullable().openapi({ description: 'The asker’s comment with the rating; null when none' }),
};

export const AnswerParams = z.object({ evaluation_id: pathParam('evaluation_id', 'The answer’s `evaluation_id`') });

export const FeedbackRequestSchema = z
  .object({
    feedback: Rating.nullable().openapi({ description: '`up`, `down`, or null to take a rating back', example: 'down' }),
    comment: text({ min: 1, max: MAX_FEEDBACK_COMMENT, multiline: true })
      .nullish()
      .openapi({
        description: `Optional, up to ${MAX_FEEDBACK_COMMENT} characters; kept only with a rating`,
        example: 'The figure is last year’s.',
      }),
  })
  .strict()
  .openapi('FeedbackRequest');

export const FeedbackSchema = z
  .object({
    evaluation_id: Id,
    feedback: Rating.nullable(),
    comment: z.string().nullable(),
    rated_at: Timestamp.nullable().openapi({ description: 'When it was rated; null when it is not' }),
  })
  .openapi('AnswerFeedback');

export const EvaluationSchema = z
  .object({
    id: Id,
    question: z.string(),
    answer: z.string().openapi({ description: 'The answer as streamed; partial when generation failed mid-stream' }),
    faithfulness_score: Score.nullable().openapi({
      description: 'Share of the answer supported by its sources, 0–1; null until scored, or when scoring failed',
    }),
    context_relevance_score: Score.nullable().openapi({
      description: 'How relevant the retrieved sources were to the question, 0–1; null until scored, or when scoring failed',
    }),
    citation_support_score: Score.nullable().openapi({
      description:
        'Share of the answer’s citations whose passage supports the sentence that cites it, 0–1: each [n] is checked ' +
        'against source n (by the judge model when one is configured, else lexically); a number that names no source ' +
        'counts as unsupported. Null until scored, when scoring failed, or when the answer cites nothing.',
    }),
    total_latency_ms: Millis,
    embedding_latency_ms: Millis.openapi({ description: 'Embedding the question; 0 when retrieval was sparse only' }),
    retrieval_latency_ms: Millis,
    rerank_latency_ms: Millis.nullable().openapi({
      description: 'Waiting for the reranker, apart from retrieval; null when the question was not reranked',
    }),
    generation_latency_ms: Millis.nullable().openapi({ description: 'Null when generation failed' }),
    time_to_first_token_ms: Millis.nullable().openapi({ description: 'Null when no token was generated' }),
    engine: z.string().openapi({ description: 'The answer engine: provider and model', example: 'openai:gpt-4o-mini' }),
    retrieval_strategy: z.string().openapi({ example: 'similarity' }),
    top_k: z.number().int(),
    collection_ids: z.array(Id).openapi({
      description:
        'Every collection the question searched (`collection_ids` of `POST /query/`), this one alone for a question ' +
        'over one. A record over several is listed under the first searched (or its chat session’s collection), ' +
        'and shown only to a participant of every one of them, never through a key restricted to one collection.',
    }),
    scorer: z.string().nullable().openapi({ description: 'Which scorer filled the scores in; null until scored' }),
    scorer_error: z.string().nullable().openapi({ description: 'Why the scores could not be computed; null otherwise' }),
    created_at: Timestamp,
    ...feedbackFields,
  })
  .openapi('Evaluation');

export const TrendPointSchema = z
  .object({
    date: z.string().openapi({ format: 'date', description: 'A UTC day', example: '2026-11-21' }),
    avg_faithfulness: Score.nullable().openapi({ description: 'Over the day’s scored queries; null when none was scored' }),
    avg_context_relevance: Score.nullable().openapi({ description: 'Over the day’s scored queries; null when none was scored' }),
    avg_citation_support: Score.nullable().openapi({
      description: 'Over the day’s scored queries that cite something; null when there are none',
    }),
    count: z.number().int().openapi({ description: 'Every query of the day in the window, scored or not' }),
  })
  .openapi('EvaluationTrendPoint');

export const WorstQuerySchema = z
  .object({
    id: Id,
    question: z.string(),
    faithfulness_score: Score,
    context_relevance_score: Score,
    total_latency_ms: Millis,
    engine: z.string(),
    created_at: Timestamp,
    ...feedbackFields,
  })
  .openapi('EvaluationWorstQuery');

export const EvaluationStatsSchema = z
  .object({
    total_queries: z.number().int().openapi({ description: 'Rows in the window (at most 500)' }),
    scored_queries: z.number().int().openapi({ description: 'Rows in the window with both scores' }),
    avg_faithfulness: Score.nullable().openapi({ description: 'Over the scored rows; null when there are none' }),
    avg_context_relevance: Score.nullable().openapi({ description: 'Over the scored rows; null when there are none' }),
    avg_citation_support: Score.nullable().openapi({
      description: 'Over the scored rows whose answer cites something; null when there are none',
    }),
    avg_total_latency_ms: MeanMillis,
    avg_retrieval_latency_ms: MeanMillis,
    avg_generation_latency_ms: MeanMillis.openapi({
      description: 'Milliseconds, over the rows whose generation finished; null when there are none',
    }),
    trend: z.array(TrendPointSchema).openapi({ description: 'One point per UTC day with queries in the window, oldest first' }),
    worst_queries: z.array(WorstQuerySchema).openapi({
      description:
        'Up to 5 scored rows, worst first: those their asker rated `down` first, then lowest of the two scores, then ' +
        'lowest sum of both, then newest. A query is as bad as its weaker score: a faithful answer from irrelevant ' +
        'sources is still a bad answer; and a person’s thumbs down outranks any score.',
    }),
    feedback_up: z.number().int().openapi({ description: 'Rows in the window their asker rated `up`' }),
    feedback_down: z.number().int().openapi({ description: 'Rows in the window their asker rated `down`' }),
  })
  .openapi('EvaluationStats');
