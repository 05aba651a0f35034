import type { Sql } from './client.ts';

/** Both in [0, 1], higher is better. */
export interface Scores {
  faithfulness_score: number;
  context_relevance_score: number;
}

/** One `[n]` of an answer, checked: does passage n support the sentence that cites it? */
export interface CitationCheck {
  /** The n of `[n]`: the n-th source of the answer. */
  source: number;
  /** The citing sentence, without its markers. */
  sentence: string;
  supported: boolean;
}

/** What the scorer reads of an evaluation record; the shapes are checked before scoring. */
export interface StoredEvaluation {
  question: unknown;
  answer: unknown;
  sources: unknown;
  scored_at: string | null;
}

/** Each [n] of the answer checked against passage n, and the share that held (null: nothing cited). */
export interface CitationScores {
  citation_support_score: number | null;
  citations: CitationCheck[];
}

/**
 * The scoring worker's SQL. Both writes apply only to a record not yet scored, so a
 * repeated or concurrent delivery never overwrites (or double-counts) a finished one.
 */
export function createEvaluationsDb(sql: Sql) {
  return {
    async load(id: string): Promise<StoredEvaluation | undefined> {
      const [row] = await sql<StoredEvaluation[]>`
        select question, answer, sources, scored_at from evaluations where id = ${id}`;
      return row;
    },

    /**
     * The scores, and the citation checks on the record and on the answer's chat message. False
     * when the record is gone or another delivery scored it first.
     */
    async saveScores(id: string, scores: Scores & CitationScores, scorer: string): Promise<boolean> {
      return sql.begin(async (tx) => {
        const rows = await tx`
          update evaluations
             set faithfulness_score = ${scores.faithfulness_score},
                 context_relevance_score = ${scores.context_relevance_score},
                 citation_support_score = ${scores.citation_support_score},
                 citations = ${tx.json(scores.citations as never)},
                 scorer = ${scorer}, scored_at = now(), scorer_error = null
           where id = ${id} and scored_at is null
          returning id`;
        if (rows.length === 0) return false;
        await tx`update chat_messages set citations = ${tx.json(scores.citations as never)} where evaluation_id = ${id}`;
        return true;
      });
    },

    /** Marks the record as done without scores, so nothing waits on it; the message is shown to users as is. */
    async saveError(id: string, scorer: string, message: string): Promise<boolean> {
      const rows = await sql`
        update evaluations set scorer = ${scorer}, scorer_error = ${message}, scored_at = now()
         where id = ${id} and scored_at is null
        returning id`;
      return rows.length > 0;
    },
  };
}

export type EvaluationsDb = ReturnType<typeof createEvaluationsDb>;
