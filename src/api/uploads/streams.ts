/** Thrown into a stream that went past its byte limit. */
export class TooLarge extends Error {
  constructor(readonly limit: number) {
    super(`more than ${limit} bytes`);
    this.name = 'TooLarge';
  }
}

/**
 * Reads up to `bytes` from the front of a stream, for sniffing, and returns a stream
 * that replays them followed by the rest.
 */
export async function peek(
  stream: ReadableStream<Uint8Array>,
  bytes: number,
): Promise<{ head: Uint8Array; complete: boolean; stream: ReadableStream<Uint8Array> }> {
  const reader = stream.getReader();
  const parts: Uint8Array[] = [];
  let length = 0;
  let complete = false;
  while (length < bytes) {
    const { done, value } = await reader.read();
    if (done) {
      complete = true;
      break;
    }
    parts.push(value);
    length += value.byteLength;
  }
  const head = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    head.set(part, offset);
    offset += part.byteLength;
  }
  const replay = new ReadableStream<Uint8Array>({
    start(controller) {
      if (head.byteLength) controller.enqueue(head);
      if (complete) controller.close();
    },
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return { head: head.subarray(0, Math.min(length, bytes)), complete, stream: replay };
}
