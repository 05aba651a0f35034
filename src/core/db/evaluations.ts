import { isUuid, type Sql } from './client.ts';

/** The stats read at most this many of a collection's most recent evaluations. */
export const STATS_WINDOW = 500;
/** How many of the lowest-scored evaluations the stats name. */
export const WORST_QUERIES = 5;

export interface EvaluationRow {
  id: string;
  question: string;
  answer: string;
  faithfulness_score: number | null;
  context_relevance_score: number | null;
  citation_support_score: number | null;
  total_latency_ms: number;
  embedding_latency_ms: number;
  retrieval_latency_ms: number;
  rerank_latency_ms: number | null;
  generation_latency_ms: number | null;
  time_to_first_token_ms: number | null;
  engine: string;
  retrieval_strategy: string;
  top_k: number;
  /** Every collection the question searched; the record's own alone for one. */
  collection_ids: string[];
  scorer: string | null;
  scorer_error: string | null;
  created_at: string;
  /** What the asker thought of the answer; null until rated. */
  feedback: Feedback | null;
  feedback_comment: string | null;
}

export type Feedback = 'up' | 'down';

/** A rating as the asker left it; `feedback` null: none, or taken back. */
export interface AnswerFeedback {
  evaluation_id: string;
  feedback: Feedback | null;
  comment: string | null;
  rated_at: string | null;
}

export interface TrendPoint {
  date: string;
  avg_faithfulness: number | null;
  avg_context_relevance: number | null;
  avg_citation_support: number | null;
  count: number;
}

export interface WorstQuery {
  id: string;
  question: string;
  faithfulness_score: number;
  context_relevance_score: number;
  total_latency_ms: number;
  engine: string;
  created_at: string;
  feedback: Feedback | null;
  feedback_comment: string | null;
}

export interface EvaluationStats {
  total_queries: number;
  scored_queries: number;
  avg_faithfulness: number | null;
  avg_context_relevance: number | null;
  avg_citation_support: number | null;
  avg_total_latency_ms: number | null;
  avg_retrieval_latency_ms: number | null;
  avg_generation_latency_ms: number | null;
  trend: TrendPoint[];
  worst_queries: WorstQuery[];
  feedback_up: number;
  feedback_down: number;
}

/** Who reads a collection's records: a user, through a key restricted to that collection or not. */
export interface EvaluationViewer {
  userId: string;
  restricted: boolean;
}

/**
 * The records of questions over several collections are shown only to a viewer who may use every one
 * of them (owner or member), and never through a key restricted to one: the question, its answer and
 * its scores come from passages of each. A record of one collection has no other.
 */
const visibleTo = (sql: Sql, viewer: EvaluationViewer) =>
  viewer.restricted
    ? sql`cardinality(collection_ids) <= 1`
    : sql`not exists (
        select 1 from unnest(collection_ids) as u(c)
         where not exists (select 1 from collections k where k.id = u.c and k.user_id = ${viewer.userId})
           and not exists (select 1 from collection_members cm where cm.collection_id = u.c and cm.user_id = ${viewer.userId}))`;

export function createEvaluationRepo(sql: Sql) {
  return {
    /** Newest first; ties on created_at broken by id so that pages never overlap. */
    list(collectionId: string, viewer: EvaluationViewer, page: { limit: number; offset: number }): Promise<EvaluationRow[]> {
      return sql<EvaluationRow[]>`
        select id, question, answer, faithfulness_score, context_relevance_score, citation_support_score,
               total_latency_ms, embedding_latency_ms, retrieval_latency_ms, rerank_latency_ms, generation_latency_ms,
               time_to_first_token_ms, engine, retrieval_strategy, top_k,
               to_jsonb(case when cardinality(collection_ids) = 0 then array[collection_id] else collection_ids end) as collection_ids,
               scorer, scorer_error, created_at, feedback, feedback_comment
          from evaluations
         where collection_id = ${collectionId} and ${visibleTo(sql, viewer)}
         order by created_at desc, id desc
         limit ${page.limit} offset ${page.offset}`;
    },

    /**
     * One statement over the window, so every figure describes the same rows. Averages are
     * cast to float8 because postgres.js hands numeric over as strings. Rows built with
     * json_agg format their timestamps here, the way the data layer formats every other
     * timestamp (ISO 8601, UTC, milliseconds), rather than in the session's time zone.
     */
    async stats(collectionId: string, viewer: EvaluationViewer): Promise<EvaluationStats> {
      const [row] = await sql<EvaluationStats[]>`
        with recent as (
          select id, question, faithfulness_score, context_relevance_score, citation_support_score, total_latency_ms,
                 retrieval_latency_ms, generation_latency_ms, engine, created_at, feedback, feedback_comment,
                 (faithfulness_score is not null and context_relevance_score is not null) as scored
            from evaluations
           where collection_id = ${collectionId} and ${visibleTo(sql, viewer)}
           order by created_at desc, id desc
           limit ${STATS_WINDOW}
        ),
        days as (
          select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as date,
                 avg(faithfulness_score) filter (where scored)::float8 as avg_faithfulness,
                 avg(context_relevance_score) filter (where scored)::float8 as avg_context_relevance,
                 avg(citation_support_score) filter (where scored)::float8 as avg_citation_support,
                 count(*)::int as count
            from recent
           group by 1
        ),
        worst as (
          select id, question, faithfulness_score, context_relevance_score, total_latency_ms, engine,
                 to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at,
                 feedback, feedback_comment,
                 row_number() over (
                   order by (feedback is distinct from 'down'),
                            least(faithfulness_score, context_relevance_score),
                            faithfulness_score + context_relevance_score,
                            created_at desc, id desc
                 ) as rank
            from recent
           where scored
           order by rank
           limit ${WORST_QUERIES}
        )
        select count(*)::int as total_queries,
               (count(*) filter (where scored))::int as scored_queries,
               (avg(faithfulness_score) filter (where scored))::float8 as avg_faithfulness,
               (avg(context_relevance_score) filter (where scored))::float8 as avg_context_relevance,
               (avg(citation_support_score) filter (where scored))::float8 as avg_citation_support,
               avg(total_latency_ms)::float8 as avg_total_latency_ms,
               avg(retrieval_latency_ms)::float8 as avg_retrieval_latency_ms,
               avg(generation_latency_ms)::float8 as avg_generation_latency_ms,
               (count(*) filter (where feedback = 'up'))::int as feedback_up,
               (count(*) filter (where feedback = 'down'))::int as feedback_down,
               coalesce((select json_agg(json_build_object(
                          'date', date, 'avg_faithfulness', avg_faithfulness,
                          'avg_context_relevance', avg_context_relevance,
                          'avg_citation_support', avg_citation_support, 'count', count) order by date)
                           from days), '[]'::json) as trend,
               coalesce((select json_agg(json_build_object(
                          'id', id, 'question', question, 'faithfulness_score', faithfulness_score,
                          'context_relevance_score', context_relevance_score, 'total_latency_ms', total_latency_ms,
                          'engine', engine, 'created_at', created_at, 'feedback', feedback,
                          'feedback_comment', feedback_comment) order by rank)
                           from worst), '[]'::json) as worst_queries
          from recent`;
      if (!row) throw new Error('The stats query returned no row');
      return row;
    },

    /** Where one of the user's answers was asked; undefined for anyone else's, or none. */
    async answerOf(id: string, userId: string): Promise<{ collection_ids: string[] } | undefined> {
      if (!isUuid(id)) return undefined;
      const [row] = await sql<{ collection_ids: string[] }[]>`
        select to_jsonb(case when cardinality(collection_ids) = 0 and collection_id is not null
                             then array[collection_id] else collection_ids end) as collection_ids
          from evaluations where id = ${id} and user_id = ${userId}`;
      return row;
    },

    /** Sets (or, with null, takes back) the user's rating of their answer; undefined when it is not theirs. */
    async setFeedback(
      id: string,
      userId: string,
      rating: { feedback: Feedback | null; comment: string | null },
    ): Promise<AnswerFeedback | undefined> {
      if (!isUuid(id)) return undefined;
      const comment = rating.feedback === null ? null : rating.comment;
      const [row] = await sql<AnswerFeedback[]>`
        update evaluations
           set feedback = ${rating.feedback}, feedback_comment = ${comment},
               feedback_at = case when ${rating.feedback}::text is null then null else now() end
         where id = ${id} and user_id = ${userId}
        returning id as evaluation_id, feedback, feedback_comment as comment, feedback_at as rated_at`;
      return row;
    },
  };
}

export type EvaluationRepo = ReturnType<typeof createEvaluationRepo>;
