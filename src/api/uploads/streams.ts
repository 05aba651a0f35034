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

/** workerd's own (Node's types, which the tests compile this file with, do not have it). */
type DigestStreamClass = new (algorithm: string) => WritableStream<Uint8Array> & { readonly digest: Promise<ArrayBuffer> };

/**
 * The stream's bytes pass through unchanged while workerd's DigestStream hashes them, so an upload is
 * hashed as it is stored, never held whole. `sha256` resolves once the stream has been read to its end.
 */
export function sha256Passing(stream: ReadableStream<Uint8Array>): {
  stream: ReadableStream<Uint8Array>;
  sha256: () => Promise<string>;
} {
  const digest = new (crypto as unknown as { DigestStream: DigestStreamClass }).DigestStream('SHA-256');
  const writer = digest.getWriter();
  const passing = stream.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      async transform(chunk, controller) {
        await writer.write(chunk);
        controller.enqueue(chunk);
      },
      flush: () => writer.close(),
    }),
  );
  return {
    stream: passing,
    sha256: async () => [...new Uint8Array(await digest.digest)].map((b) => b.toString(16).padStart(2, '0')).join(''),
  };
}
