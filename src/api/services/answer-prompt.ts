/**
 * The answer prompt: the contract between the query service, which builds it, and the model that answers it.
 * A production LLM reads it as instructions; the devstack's extractive engine parses it back
 * (devstack/models/extractive-engine.ts), so the layout below is exact, not a suggestion:
 *
 *   Question: <the question, whitespace collapsed onto one line>
 *   <blank line>
 *   Context passages:
 *   <blank line>
 *   [1] (source: <name>, page <page>)
 *   <passage text, one or more lines>
 *   <blank line>
 *   [2] (source: <name>)
 *   <passage text>
 *
 * Passages are numbered from 1 in the order given, which is the order of the sources the client receives, so a
 * citation [n] names the n-th source. With no passages the section holds the single line NO_PASSAGES_LINE.
 */

export interface AnswerSource {
  text: string;
  /** Document name. */
  source: string;
  /** 1-based page the passage comes from, when known. */
  page?: number;
}

export interface AnswerPrompt {
  system: string;
  prompt: string;
}

export const QUESTION_PREFIX = 'Question: ';
export const PASSAGES_HEADING = 'Context passages:';
export const NO_PASSAGES_LINE = '(none: no sources were found for this question)';
/** What an answer says, alone, when the passages do not answer the question. */
export const NO_ANSWER = 'The documents do not contain an answer to this question.';

/** A passage's header line; groups: number, source name, page (optional). */
export const PASSAGE_HEADER = /^\[(\d+)\] \(source: (.*?)(?:, page (\d+))?\)$/;
/**
 * A passage line that would read as a header. The builder indents such lines by one space and the parser takes the
 * space off again, so text quoted from a document cannot start a passage of its own.
 */
export const HEADER_LIKE_LINE = /^ *\[\d+\] \(source: /;

export const ANSWER_SYSTEM_PROMPT = [
  'You answer questions using only the numbered context passages in the user message.',
  '- Use only what the passages state. Do not add outside knowledge or guesses.',
  '- Cite the passage each statement comes from with its number in square brackets after the sentence, e.g. [2]; cite several as [1][3].',
  `- If the passages do not contain the answer, or there are none, reply with exactly this sentence and nothing else: ${NO_ANSWER}`,
  '- Answer concisely, in the language of the question.',
].join('\n');

const collapse = (text: string) => text.replace(/\s+/gu, ' ').trim();

export function passageHeader(number: number, source: string, page?: number): string {
  const name = collapse(source) || 'unnamed';
  return `[${number}] (source: ${name}${page === undefined ? '' : `, page ${page}`})`;
}

function passageBody(text: string): string {
  return text
    .replace(/\r\n?/gu, '\n')
    .trim()
    .split('\n')
    .map((line) => (HEADER_LIKE_LINE.test(line) ? ` ${line}` : line))
    .join('\n');
}

/**
 * The system message and user prompt that ask a model to answer `question` from `sources`, citing them as [n].
 * Throws a RangeError for a question with no visible characters.
 */
export function buildAnswerPrompt(question: string, sources: readonly AnswerSource[]): AnswerPrompt {
  // One line, so nothing in the question can pose as the passages section.
  const oneLine = collapse(question);
  if (oneLine.length === 0) throw new RangeError('buildAnswerPrompt: the question is empty');
  const passages =
    sources.length === 0
      ? [NO_PASSAGES_LINE]
      : sources.map((s, i) => {
          // A page that is not a positive whole number is metadata noise: leave it out rather than cite it.
          const page = s.page !== undefined && Number.isInteger(s.page) && s.page >= 1 ? s.page : undefined;
          return `${passageHeader(i + 1, s.source, page)}\n${passageBody(s.text)}`;
        });
  const prompt = `${QUESTION_PREFIX}${oneLine}\n\n${PASSAGES_HEADING}\n\n${passages.join('\n\n')}`;
  return { system: ANSWER_SYSTEM_PROMPT, prompt };
}
