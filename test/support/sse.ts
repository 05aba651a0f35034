import { type QueryEvent, readQueryStream } from '../../client/index.ts';
import { type ErrorBody, stack } from './client.ts';

/** One event of the answer, typed by the description (narrow on `event`), and when it came. */
export type StreamEvent = QueryEvent & {
  /** Milliseconds since the request was sent. */
  at: number;
};

/**
 * POST /query/ read as a client would: the body read by the typed client's one reader of the stream. Stops
 * reading (and so disconnects) when `stopAfter` returns true for an event.
 */
export async function askQuestion(
  token: string,
  body: Record<string, unknown>,
  options: { stopAfter?: (event: StreamEvent) => boolean; onEvent?: (event: StreamEvent) => Promise<void> } = {},
): Promise<{ status: number; contentType: string | null; events: StreamEvent[]; json?: Partial<ErrorBody> }> {
  const started = performance.now();
  const controller = new AbortController();
  const response = await fetch(`${stack.apiUrl}/query/`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  const contentType = response.headers.get('content-type');
  if (!contentType?.startsWith('text/event-stream')) {
    return { status: response.status, contentType, events: [], json: await response.json() };
  }
  const events: StreamEvent[] = [];
  try {
    for await (const { event, data } of readQueryStream(response.body as ReadableStream<Uint8Array>)) {
      const seen = { event, data, at: performance.now() - started } as StreamEvent;
      events.push(seen);
      await options.onEvent?.(seen);
      if (options.stopAfter?.(seen)) {
        controller.abort();
        break;
      }
    }
  } catch (error) {
    if (!controller.signal.aborted) throw error;
  }
  return { status: response.status, contentType, events };
}

/** The data of the first `event` among `events`, typed by its kind: `dataOf(events, 'metadata')?.sources`. */
export function dataOf<E extends QueryEvent['event']>(events: StreamEvent[], event: E) {
  type Data = Extract<QueryEvent, { event: E }>['data'];
  return events.find((seen) => seen.event === event)?.data as Data | undefined;
}
