/**
 * The answer prompt: the system message, and the user message in the layout that #core/contracts/answer-prompt-format.ts
 * fixes, since the devstack's extractive engine parses it back.
 */
import {
  DOCUMENT_PREFIX,
  escapePassageLine,
  NO_ANSWER,
  NO_PASSAGES_LINE,
  PASSAGES_HEADING,
  passageHeader,
  QUESTION_PREFIX,
  SECTION_PREFIX,
} from '#core/contracts/answer-prompt-format.ts';
import { contextLine, type DocumentContext } from './document-context.ts';

/** A passage as the prompt numbers and cites it. */
export interface PromptPassage {
  text: string;
  /** Document name, shown as the passage's `source`. */
  source: string;
  /** 1-based page the passage comes from, when known. */
  page?: number;
  /** Its heading path, joined with " > ". */
  heading?: string;
  /** Its document's title and date (document-context.ts): the same the passage was indexed under. */
  context?: DocumentContext;
}

export interface AnswerPrompt {
  system: string;
  prompt: string;
}

export const ANSWER_SYSTEM_PROMPT = [
  'You answer questions using only the numbered context passages in the user message.',
  '- Use only what the passages state. Do not add outside knowledge or guesses.',
  '- Cite the passage each statement comes from with its number in square brackets after the sentence, e.g. [2]; cite several as [1][3].',
  `- If the passages do not contain the answer, or there are none, reply with exactly this sentence and nothing else: ${NO_ANSWER}`,
  '- Answer concisely, in the language of the question.',
].join('\n');

const collapse = (text: string) => text.replace(/\s+/gu, ' ').trim();

function passageBody(text: string): string {
  return text.replace(/\r\n?/gu, '\n').trim().split('\n').map(escapePassageLine).join('\n');
}

/**
 * The system message and user prompt that ask a model to answer `question` from `passages`, citing them as [n].
 * Throws a RangeError for a question with no visible characters.
 */
export function buildAnswerPrompt(question: string, passages: readonly PromptPassage[]): AnswerPrompt {
  // One line, so nothing in the question can pose as the passages section.
  const oneLine = collapse(question);
  if (oneLine.length === 0) throw new RangeError('buildAnswerPrompt: the question is empty');
  const blocks =
    passages.length === 0
      ? [NO_PASSAGES_LINE]
      : passages.map((p, i) => {
          // A page that is not a positive whole number is metadata noise: leave it out rather than cite it.
          const page = p.page !== undefined && Number.isInteger(p.page) && p.page >= 1 ? p.page : undefined;
          const context = [
            ...(p.context ? [`${DOCUMENT_PREFIX}${collapse(contextLine(p.context))}`] : []),
            ...(p.heading && collapse(p.heading) ? [`${SECTION_PREFIX}${collapse(p.heading)}`] : []),
          ];
          return [passageHeader(i + 1, collapse(p.source) || 'unnamed', page), ...context, passageBody(p.text)].join('\n');
        });
  const prompt = `${QUESTION_PREFIX}${oneLine}\n\n${PASSAGES_HEADING}\n\n${blocks.join('\n\n')}`;
  return { system: ANSWER_SYSTEM_PROMPT, prompt };
}
