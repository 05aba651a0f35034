import { isUuid, type Sql, type Tx } from './client.ts';
import type { UsageEventRow } from './usage.ts';

export interface Exchange {
  /** The evaluation record's id, chosen before the answer ends so that the stream can name it. */
  id: string;
  /** Where the record is listed: the session's collection, else the first searched; null for the personal space. */
  collectionId: string | null;
  /** Every collection the question searched, in the order asked; none for the personal space. */
  collectionIds: readonly string[];
  userId: string;
  sessionId: string | null;
  question: string;
  answer: string;
  sources: unknown[];
  totalLatencyMs: number;
  embeddingLatencyMs: number;
  retrievalLatencyMs: number;
  /** Time spent waiting for the reranker; null when it was not asked. */
  rerankLatencyMs: number | null;
  generationLatencyMs: number | null;
  timeToFirstTokenMs: number | null;
  engine: string;
  retrievalStrategy: string;
  topK: number;
  /** The question's and the answer's model usage, written in the record's own statement; empty: none recorded. */
  usage: readonly UsageEventRow[];
}

/** A uuid[] literal, as documents.live writes one: without fetched types (client.ts) postgres.js cannot send an array. */
const uuidArray = (ids: readonly string[]) => `{${ids.filter(isUuid).join(',')}}`;

/** Session titles are at most 100 characters; a long first question is cut at a word. */
const TITLE_LENGTH = 100;

export function createExchangeRepo(sql: Sql) {
  return {
    /**
     * The question and answer in their session (when there is one, which also moves its
     * updated_at and names an untitled session after the question) and the evaluation
     * record (`exchange.id`), in one transaction.
     */
    async record(exchange: Exchange): Promise<void> {
      // Without a session the record is one insert: no transaction, two round trips fewer per answer.
      if (!exchange.sessionId) return insertEvaluation(sql, exchange, null);
      await sql.begin(async (tx) => {
        const [session] = await tx`
          update chat_sessions
             set updated_at = now(), title = coalesce(title, ${titleFrom(exchange.question)})
           where id = ${exchange.sessionId} and user_id = ${exchange.userId}
          returning id`;
        // The session may have been deleted while the answer streamed: the record still stands.
        const sessionId = session ? exchange.sessionId : null;
        await insertEvaluation(tx, exchange, sessionId);
        const evaluationId = exchange.id;
        if (sessionId) {
          // The answer names its record, so the scoring worker can put the citation checks on it.
          const searched = uuidArray(exchange.collectionIds);
          await tx`insert into chat_messages (session_id, role, content, sources, evaluation_id, collection_ids)
                   values (${sessionId}, 'user', ${exchange.question}, '[]'::jsonb, null, ${searched}::uuid[]),
                          (${sessionId}, 'assistant', ${exchange.answer}, ${tx.json(exchange.sources as never)}, ${evaluationId},
                           ${searched}::uuid[])`;
        }
      });
    },
  };
}

async function insertEvaluation(sql: Sql | Tx, exchange: Exchange, sessionId: string | null): Promise<void> {
  const evaluationId = exchange.id;
  // The usage rows ride in the same statement: no second round trip or commit for a question (docs/benchmarks.md,
  // "Usage recording").
  const usage =
    exchange.usage.length > 0 ? sql`, usage as (insert into usage_events ${sql(exchange.usage as UsageEventRow[])})` : sql``;
  await sql`
    with evaluation as (
    insert into evaluations (id, collection_id, user_id, session_id, question, answer, sources, total_latency_ms,
                             embedding_latency_ms, retrieval_latency_ms, rerank_latency_ms, generation_latency_ms,
                             time_to_first_token_ms, engine, retrieval_strategy, top_k, collection_ids)
    values (${evaluationId}, ${exchange.collectionId}, ${exchange.userId}, ${sessionId}, ${exchange.question},
            ${exchange.answer}, ${sql.json(exchange.sources as never)}, ${exchange.totalLatencyMs},
            ${exchange.embeddingLatencyMs}, ${exchange.retrievalLatencyMs}, ${exchange.rerankLatencyMs}, ${exchange.generationLatencyMs},
            ${exchange.timeToFirstTokenMs}, ${exchange.engine}, ${exchange.retrievalStrategy}, ${exchange.topK},
            ${uuidArray(exchange.collectionIds)}::uuid[])
    returning id) ${usage}
    select id from evaluation`;
}

function titleFrom(question: string): string {
  const flat = question.replace(/\s+/g, ' ').trim();
  if (flat.length <= TITLE_LENGTH) return flat;
  const cut = flat.slice(0, TITLE_LENGTH - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > 40 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

export type ExchangeRepo = ReturnType<typeof createExchangeRepo>;
