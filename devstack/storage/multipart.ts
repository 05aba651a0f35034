import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import { invalidRequest } from './errors.ts';

export interface PartHeaders {
  name: string;
  filename: string | undefined;
  contentType: string | undefined;
}

export interface MultipartVisitor {
  /** A non-file part, in full. */
  field(name: string, value: string): void;
  /** The first file part's headers, before any of its bytes; throwing here ends the parse. */
  fileStart(part: PartHeaders): Promise<void> | void;
  /** The first file part's bytes, in order. */
  fileData(chunk: Uint8Array): Promise<void>;
}

// Fields carry cacheControl, contentType and user metadata (which Storage caps at 1 MiB).
const MAX_FIELD_BYTES = 2 * 1024 * 1024;

export function boundaryOf(contentType: string): string | undefined {
  const match = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const boundary = match?.[1] ?? match?.[2];
  return boundary && boundary.length <= 200 ? boundary : undefined;
}

async function* buffers(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<Buffer> {
  for await (const chunk of chunks) yield Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

/**
 * Streams a multipart/form-data body (RFC 7578) through busboy, the parser Storage itself uses (via
 * fastify-multipart), without holding it in memory: field parts are collected, the first file part is handed over
 * chunk by chunk, and later file parts are skipped, as Storage takes one file per upload.
 */
export async function parseMultipart(
  chunks: AsyncIterable<Uint8Array>,
  boundary: string,
  visitor: MultipartVisitor,
): Promise<void> {
  const parser = busboy({
    headers: { 'content-type': `multipart/form-data; boundary="${boundary}"` },
    defParamCharset: 'utf8',
    limits: { files: 1, fieldSize: MAX_FIELD_BYTES },
  });
  // What the visitor threw wins over the parse error it causes, so a refused mime type stays a 415.
  let refusal: { error: unknown } | undefined;
  const visit = async (step: () => Promise<void> | void) => {
    try {
      await step();
    } catch (error) {
      refusal ??= { error };
      throw error;
    }
  };
  // The visitor sees parts one at a time and in order: a field that follows the file waits for the file's last byte.
  let visits: Promise<void> = Promise.resolve();
  const enqueue = (step: () => Promise<void>) => {
    visits = visits.then(step);
    visits.catch((error: unknown) => parser.destroy(error instanceof Error ? error : new Error(String(error))));
  };
  parser.on('field', (name, value, info) =>
    enqueue(() =>
      visit(() => {
        if (info.valueTruncated) throw invalidRequest(`multipart field ${name} is too large`);
        visitor.field(name ?? '', value);
      }),
    ),
  );
  parser.on('file', (name, file, info) => {
    // A failed parse destroys the file stream with the parser's error, which pipeline below reports already.
    file.on('error', () => {});
    enqueue(async () => {
      // busboy reports an empty name (supabase-js sends name="") as undefined, whatever its types say.
      await visit(() => visitor.fileStart({ name: name ?? '', filename: info.filename, contentType: info.mimeType }));
      for await (const chunk of file) await visit(() => visitor.fileData(chunk));
    });
  });

  try {
    await pipeline(buffers(chunks), parser);
    await visits;
  } catch (error) {
    if (refusal) throw refusal.error;
    const message = error instanceof Error ? error.message : '';
    throw invalidRequest(message.startsWith('Unexpected end') ? 'Unexpected end of multipart body' : 'Malformed multipart body');
  }
}
