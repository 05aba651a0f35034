/**
 * Reading request and response bodies whose size the sender decides: with a cap, counted as the
 * bytes stream in, whatever Content-Length says or when there is none (a chunked body).
 */

type BodyReader = Pick<ReadableStreamDefaultReader<Uint8Array>, 'read' | 'cancel'>;

/** What is read and thrown away of a request body we stopped using, before it is cancelled. */
export const DISCARD_LIMIT = 64 * 1024 * 1024;

/**
 * Reads what is left of a request body and throws it away, up to `limit` bytes, then cancels the
 * rest. Answering while the client is still sending can reset its connection before it reads the
 * answer, and wrangler dev's proxy loses the next request on a connection whose body was left
 * unread (workerd#1741). Nothing is kept, so this costs reads, not memory.
 */
export async function discardRest(reader: BodyReader, limit = DISCARD_LIMIT): Promise<void> {
  let seen = 0;
  try {
    while (seen <= limit) {
      const { done, value } = await reader.read();
      if (done) return;
      seen += value.byteLength;
    }
    await reader.cancel();
  } catch {
    // The client went away: nothing left to discard.
  }
}

/**
 * A body read whole, never keeping more than `maxBytes`: past that the answer is null, and the rest
 * is cancelled (a response) or, for a request body, discarded (see discardRest).
 */
export async function readCapped(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
  rest: 'cancel' | 'discard' = 'cancel',
): Promise<Uint8Array | null> {
  if (!body) return new Uint8Array();
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await (rest === 'discard' ? discardRest(reader) : reader.cancel().catch(() => {}));
      return null;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
