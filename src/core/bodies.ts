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

/** ES2024's resizable ArrayBuffer, which the project's ES2023 library types do not describe yet. */
interface GrowableBuffer extends ArrayBuffer {
  resize(byteLength: number): void;
}
const GrowableBuffer = ArrayBuffer as unknown as new (byteLength: number, options: { maxByteLength: number }) => GrowableBuffer;

/**
 * A body read whole into one buffer, never keeping more than `maxBytes`: past that the answer is
 * null, and the rest is cancelled (a response) or, for a request body, discarded (see discardRest).
 * The buffer is resizable: it reserves `maxBytes` of address space and takes memory only as it
 * grows, in place, as the pieces arrive. So a body is held once, whether or not its length was
 * declared and whether or not it came compressed: pieces joined at the end were held twice while
 * they were joined, a 50 MB page as 100 MB (measured in workerd: 40 MB grown in place took 41 MB,
 * joined 82 MB).
 */
export async function readCapped(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
  rest: 'cancel' | 'discard' = 'cancel',
): Promise<Uint8Array | null> {
  if (!body) return new Uint8Array();
  const reader = body.getReader();
  const buffer = new GrowableBuffer(0, { maxByteLength: maxBytes });
  // A view that follows the buffer's length as it grows.
  const view = new Uint8Array(buffer);
  let filled = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (filled + value.byteLength > maxBytes) {
      await (rest === 'discard' ? discardRest(reader) : reader.cancel().catch(() => {}));
      return null;
    }
    buffer.resize(filled + value.byteLength);
    view.set(value, filled);
    filled += value.byteLength;
  }
  return new Uint8Array(buffer, 0, filled);
}
