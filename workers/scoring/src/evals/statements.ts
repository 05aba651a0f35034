import { splitSentences } from '#core/text/sentences.ts';
import { tokenize } from '#retrieval/sparse.ts';

/** A sentence (or a few short ones run together) of an answer, with its content terms. */
export interface Statement {
  text: string;
  terms: string[];
}

/** What an answer says, as the scorers see it. */
export interface AnswerStatements {
  /** The answer's claims: its sentences without citation markers, refusals or filler. */
  statements: Statement[];
  /** Sentences saying the sources lack the answer; they claim nothing about the question itself. */
  refusals: number;
}

// "[1]", "[2, 3]", "[1-3]", "[Source 2]", "[doc 4]": what the answer prompt asks the model to cite with.
const CITATION = /\s*\[\s*(?:(?:source|doc|document|ref)\s*)?\d+(?:\s*[-–,;]\s*(?:(?:source|doc|document|ref)\s*)?\d+)*\s*\]/giu;

/** Words that frame a sentence ("According to the documents, …") rather than carry its content. */
const FRAMING_TERMS = new Set(
  tokenize('according document documents source sources context provided passage passages excerpt excerpts mentioned mentions'),
);

// "- ", "* ", "1. ", "2) " at the start of a line: list structure, not content (and not a number the sources must contain).
const LIST_MARKER = /^[ \t]*(?:[-*•+]|\d{1,3}[.)])[ \t]+/gmu;

// A Markdown table: a header row, a delimiter row of dashes, then its rows.
const TABLE_LINE = /^[ \t]*\|.*\|[ \t]*$/u;
const DELIMITER = /^[ \t]*\|(?:[ \t]*:?-+:?[ \t]*\|)+[ \t]*$/u;
const cellsOf = (line: string) =>
  line
    .trim()
    .replace(/^\||\|$/gu, '')
    .split('|')
    .map((cell) => cell.trim());

/**
 * Each row of a Markdown table as a sentence of its own, its cells named by their columns ("Team: Greens; Cups:
 * 7."), as the parsers index a table's rows: a row is one claim, and its header alone claims nothing. Read as
 * lines, a table would be one run-on statement of every row and the header together.
 */
export function tableRowsAsSentences(text: string): string {
  const lines = text.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (!TABLE_LINE.test(line) || !DELIMITER.test(lines[i + 1] ?? '')) {
      out.push(line);
      continue;
    }
    const header = cellsOf(line);
    i += 2;
    for (; i < lines.length && TABLE_LINE.test(lines[i] as string); i++) {
      const named = cellsOf(lines[i] as string).map((cell, c) => (header[c] ? `${header[c]}: ${cell}` : cell));
      out.push(`${named.join('; ')}.`);
    }
    i--;
  }
  return out.join('\n');
}

// A sentence with fewer terms than this is filler ("Yes.") or a fragment cut off at an
// abbreviation the splitter does not know; it is read together with the sentence after it.
const MIN_STATEMENT_TERMS = 3;

export function stripCitations(text: string): string {
  return text.replace(CITATION, '');
}

/** Content terms as `tokenize` gives them, without the words that only frame a statement. */
export function contentTerms(text: string): string[] {
  return tokenize(text).filter((term) => !FRAMING_TERMS.has(term));
}

const MENTIONS_SOURCES =
  /\b(?:documents?|sources?|context|passages?|excerpts?|provided (?:text|information|material)|information (?:provided|given|available))\b/u;
const NEGATED_COVERAGE =
  /\b(?:do|does|did)(?: not|n't)\b|\b(?:no|not enough|insufficient) (?:specific )?(?:information|mention|details?|data|evidence)\b|\bnot (?:mentioned|specified|stated|covered|addressed|discussed|included|provided|described)\b|\bcontains? no\b|\bmakes? no mention\b/u;
const UNABLE =
  /\b(?:i|we) (?:do not|don't|cannot|can't|could not|couldn't|am unable to|was unable to|are unable to) (?:know|find|answer|determine|tell|say)\b/u;

/**
 * Whether a sentence says the sources do not answer the question ("The documents do not
 * contain …", "I could not find …"): a statement about the retrieval, not about the world.
 */
export function isRefusal(sentence: string): boolean {
  const text = sentence.toLowerCase().replace(/[\u2018\u2019\u02bc]/gu, "'");
  return UNABLE.test(text) || (MENTIONS_SOURCES.test(text) && NEGATED_COVERAGE.test(text));
}

/** Splits an answer into the statements whose support the scorers check. */
export function answerStatements(answer: string): AnswerStatements {
  const statements: Statement[] = [];
  let refusals = 0;
  let pending: Statement | null = null;
  for (const sentence of splitSentences(tableRowsAsSentences(stripCitations(answer)).replace(LIST_MARKER, ''))) {
    if (isRefusal(sentence)) {
      refusals++;
      continue;
    }
    const terms = contentTerms(sentence);
    const merged: Statement = pending
      ? { text: `${pending.text} ${sentence}`, terms: [...pending.terms, ...terms] }
      : { text: sentence, terms };
    if (merged.terms.length < MIN_STATEMENT_TERMS) {
      pending = merged;
      continue;
    }
    statements.push(merged);
    pending = null;
  }
  // A short last sentence joins the one before it; alone, it is the whole answer.
  if (pending && pending.terms.length > 0) {
    const last = statements.pop();
    statements.push(last ? { text: `${last.text} ${pending.text}`, terms: [...last.terms, ...pending.terms] } : pending);
  }
  return { statements, refusals };
}
