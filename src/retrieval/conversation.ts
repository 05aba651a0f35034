import { encodeWeightedQuery, type SparseVector } from './sparse.ts';

/** One earlier question of a session and the answer it got. */
export interface Turn {
  question: string;
  answer: string;
}

export interface HistoryMessage {
  role: 'user' | 'assistant';
  content: string;
}

/** Exchanges read back from a session: enough for "and what about…", few enough to stay on topic. */
export const HISTORY_TURNS = 3;

/**
 * Weights of the terms of earlier questions in the sparse query, most recent first. A follow-up
 * such as "what were its side effects?" names nothing the index can find; the question before it
 * does. Lower weights let a follow-up that names a new subject still lead.
 */
const EARLIER_QUESTION_WEIGHTS = [0.5, 0.25, 0.125];

/** What the prompt may spend on earlier turns, in tokens of about 4 characters. */
export const HISTORY_TOKEN_BUDGET = 1500;
const CHARS_PER_TOKEN = 4;
/** An earlier answer longer than this is cut, so one long answer cannot crowd out the rest. */
const MAX_ANSWER_CHARS = 2000;

/** Messages in order, as pairs of a question and the answer after it; an unanswered question is left out. */
export function turnsOf(messages: readonly HistoryMessage[]): Turn[] {
  const turns: Turn[] = [];
  for (let i = 0; i + 1 < messages.length; i++) {
    const [asked, answered] = [messages[i], messages[i + 1]];
    if (asked?.role === 'user' && answered?.role === 'assistant') {
      turns.push({ question: asked.content, answer: answered.content });
      i++;
    }
  }
  return turns;
}

/**
 * What retrieval searches for: the question, made standalone lexically, which works with any
 * provider. The sparse query carries the terms of the last earlier questions at lower weights;
 * the dense query embeds those questions followed by this one. Without turns, just the question.
 */
export function searchQuery(question: string, turns: readonly Turn[]): { text: string; sparse: SparseVector } {
  const earlier = turns.slice(-EARLIER_QUESTION_WEIGHTS.length);
  const parts = [
    { text: question, weight: 1 },
    ...earlier.toReversed().map((turn, i) => ({ text: turn.question, weight: EARLIER_QUESTION_WEIGHTS[i] as number })),
  ];
  return { text: [...earlier.map((turn) => turn.question), question].join('\n'), sparse: encodeWeightedQuery(parts) };
}

/** The latest turns that fit the budget, oldest first, as chat messages before the prompt. */
export function historyMessages(turns: readonly Turn[], budgetTokens = HISTORY_TOKEN_BUDGET): HistoryMessage[] {
  let room = budgetTokens * CHARS_PER_TOKEN;
  const kept: HistoryMessage[][] = [];
  for (const turn of turns.toReversed()) {
    const answer = turn.answer.length > MAX_ANSWER_CHARS ? `${turn.answer.slice(0, MAX_ANSWER_CHARS)}…` : turn.answer;
    room -= turn.question.length + answer.length;
    if (room < 0) break;
    kept.unshift([
      { role: 'user', content: turn.question },
      { role: 'assistant', content: answer },
    ]);
  }
  return kept.flat();
}
