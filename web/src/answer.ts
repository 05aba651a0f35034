import { EventSourceParserStream } from 'eventsource-parser/stream';

/** A source as the API gives it (metadata.sources, and each message's sources). */
export interface Source {
  source: string;
  chunk_index: number;
  text: string;
  chunk_type: 'text' | 'image_description';
  image_url: string | null;
  document_id: string | null;
  page: number | string | null;
  heading: string | null;
}

export type AnswerEvent =
  | { type: 'metadata'; sources: Source[] }
  | { type: 'token'; token: string }
  | { type: 'done' }
  | { type: 'error'; message: string };

/** The contract's events from an answer's stream, in order. */
export async function* answerEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<AnswerEvent> {
  const reader = body
    .pipeThrough(new TextDecoderStream() as unknown as TransformStream<Uint8Array, string>)
    .pipeThrough(new EventSourceParserStream())
    .getReader();
  try {
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      const { event, data } = next.value;
      const parsed = JSON.parse(data);
      if (event === 'metadata') yield { type: 'metadata', sources: parsed.sources };
      else if (event === 'token') yield { type: 'token', token: parsed.token };
      else if (event === 'done') yield { type: 'done' };
      else if (event === 'error') yield { type: 'error', message: parsed.message };
    }
  } finally {
    reader.releaseLock();
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
