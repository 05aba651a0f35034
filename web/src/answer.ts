import { readQueryStream, type Source } from '../../client/index.ts';

export type { Source };

export type AnswerEvent =
  | { type: 'metadata'; sources: Source[] }
  | { type: 'token'; token: string }
  | { type: 'done' }
  | { type: 'error'; message: string };

/** The contract's events from an answer's stream, in order, read by the typed client's one reader of it. */
export async function* answerEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<AnswerEvent> {
  for await (const { event, data } of readQueryStream(body)) {
    if (event === 'metadata') yield { type: 'metadata', sources: data.sources };
    else if (event === 'token') yield { type: 'token', token: data.token };
    else if (event === 'done') yield { type: 'done' };
    else yield { type: 'error', message: data.message };
  }
}

/** Where a passage sits, in words: "page 4", "sheet Q3", with its heading. */
export function placeOf(source: Source): string {
  const where =
    typeof source.page === 'number' ? `page ${source.page}` : typeof source.page === 'string' ? `sheet ${source.page}` : null;
  return [where, source.heading].filter(Boolean).join(' · ');
}

/** The answer's text cut at its [n] markers: strings, and numbers where a citation sits. */
export function citationParts(text: string): (string | number)[] {
  const parts: (string | number)[] = [];
  let last = 0;
  for (const match of text.matchAll(/\[(\d{1,3})\]/g)) {
    if (match.index > last) parts.push(text.slice(last, match.index));
    parts.push(Number(match[1]));
    last = match.index + match[0].length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return parts;
}
