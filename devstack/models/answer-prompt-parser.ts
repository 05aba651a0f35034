import {
  DOCUMENT_PREFIX,
  PASSAGE_HEADER,
  PASSAGES_HEADING,
  QUESTION_PREFIX,
  SECTION_PREFIX,
  unescapePassageLine,
} from '#core/contracts/answer-prompt-format.ts';
import type { ChatMessage } from './chat-handler.ts';

export interface ParsedPassage {
  /** 1-based, as cited. */
  number: number;
  source: string;
  page?: number;
  /** The Document line after the header: its document's title and date. */
  document?: string;
  /** The Section line: its heading path. */
  section?: string;
  text: string;
}

export interface ParsedAnswerPrompt {
  question: string;
  passages: ParsedPassage[];
}

/**
 * Reads the question and numbered passages back out of the last user message, in the layout of
 * #core/contracts/answer-prompt-format.ts. A message in any other layout is taken whole as the question, with no
 * passages.
 */
export function parseAnswerPrompt(messages: readonly ChatMessage[]): ParsedAnswerPrompt {
  const content = messages.findLast((m) => m.role === 'user')?.content ?? '';
  const lines = content.replace(/\r\n?/gu, '\n').split('\n');
  const questionAt = lines.findIndex((line) => line.startsWith(QUESTION_PREFIX));
  if (questionAt < 0) return { question: content.replace(/\s+/gu, ' ').trim(), passages: [] };
  const question = (lines[questionAt] as string).slice(QUESTION_PREFIX.length).trim();
  const headingAt = lines.indexOf(PASSAGES_HEADING, questionAt + 1);
  if (headingAt < 0) return { question, passages: [] };

  const passages: ParsedPassage[] = [];
  let body: string[] = [];
  // Right after a header, before any text: where the Document and Section lines may be.
  let inContext = false;
  const close = () => {
    const passage = passages.at(-1);
    if (!passage) return;
    while (body.length > 0 && body.at(-1)?.trim() === '') body.pop();
    passage.text = body.map(unescapePassageLine).join('\n');
    body = [];
  };
  for (const line of lines.slice(headingAt + 1)) {
    const header = PASSAGE_HEADER.exec(line);
    // Only the next number opens a passage, which keeps a stray "[7] (source: …" in a text where it belongs.
    if (header && Number(header[1]) === passages.length + 1) {
      close();
      passages.push({
        number: passages.length + 1,
        source: header[2] as string,
        ...(header[3] === undefined ? {} : { page: Number(header[3]) }),
        text: '',
      });
      inContext = true;
    } else if (inContext && line.startsWith(DOCUMENT_PREFIX) && !(passages.at(-1) as ParsedPassage).document) {
      (passages.at(-1) as ParsedPassage).document = line.slice(DOCUMENT_PREFIX.length);
    } else if (inContext && line.startsWith(SECTION_PREFIX)) {
      (passages.at(-1) as ParsedPassage).section = line.slice(SECTION_PREFIX.length);
      inContext = false;
    } else if (passages.length > 0 && (body.length > 0 || line.trim() !== '')) {
      inContext = false;
      body.push(line);
    }
  }
  close();
  return { question, passages };
}

/**
 * The questions of the earlier turns a prompt carries (the user messages before the last one), most recent
 * last. They may hold the prompt's own layout when a client sent one; only its question line is kept then.
 */
export function earlierQuestions(messages: readonly ChatMessage[]): string[] {
  const users = messages.filter((m) => m.role === 'user');
  return users.slice(0, -1).map((m) => parseAnswerPrompt([m]).question);
}
