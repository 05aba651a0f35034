/**
 * Contract: the layout of the answer prompt's user message. The API builds it
 * (src/retrieval/answer-prompt.ts); a production LLM reads it as instructions, and the devstack's extractive
 * engine parses it back (devstack/models/answer-prompt-parser.ts). Both sides import this module and nothing else
 * of each other, so the layout below is exact, not a suggestion:
 *
 *   Question: <the question, whitespace collapsed onto one line>
 *   <blank line>
 *   Context passages:
 *   <blank line>
 *   [1] (source: <name>, page <page>)
 *   Document: <the document's title, and its date>
 *   Section: <the heading path, outermost first, joined with " > ">
 *   <passage text, one or more lines>
 *   <blank line>
 *   [2] (source: <name>)
 *   <passage text>
 *
 * The Document and Section lines follow the header directly, each only where it is known (issue 22: a passage
 * knows its document), and never hold a line break.
 * Passages are numbered from 1 in the order given, which is the order of the sources the client receives, so a
 * citation [n] names the n-th source. With no passages the section holds the single line NO_PASSAGES_LINE.
 */

export const QUESTION_PREFIX = 'Question: ';
export const PASSAGES_HEADING = 'Context passages:';
export const NO_PASSAGES_LINE = '(none: no sources were found for this question)';
/** What an answer says, alone, when the passages do not answer the question. */
export const NO_ANSWER = 'The documents do not contain an answer to this question.';

/** A passage's header line; groups: number, source name, page (optional). */
export const PASSAGE_HEADER = /^\[(\d+)\] \(source: (.*?)(?:, page (\d+))?\)$/;

/** The header line PASSAGE_HEADER reads; `source` must already be on one line. */
export function passageHeader(number: number, source: string, page?: number): string {
  return `[${number}] (source: ${source}${page === undefined ? '' : `, page ${page}`})`;
}

/** The line, after a passage's header, that gives its document's context (src/retrieval/document-context.ts). */
export const DOCUMENT_PREFIX = 'Document: ';
/** The line, after the header and any Document line, that gives the passage's heading path. */
export const SECTION_PREFIX = 'Section: ';

// A passage line that would read as a header or a context line. The builder indents such lines by one space and
// the parser takes the space off again, so text quoted from a document cannot start a passage of its own, nor
// pose as its document's title.
const HEADER_LIKE_LINE = /^ *(?:\[\d+\] \(source: |Document: |Section: )/;

/** A line of passage text as the prompt carries it. */
export function escapePassageLine(line: string): string {
  return HEADER_LIKE_LINE.test(line) ? ` ${line}` : line;
}

/** A line of passage text as the document had it: the inverse of escapePassageLine. */
export function unescapePassageLine(line: string): string {
  return line.startsWith(' ') && HEADER_LIKE_LINE.test(line) ? line.slice(1) : line;
}
