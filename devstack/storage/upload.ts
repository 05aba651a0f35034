import { noContentProvided } from './errors.ts';
import { assertMimeTypeAllowed } from './limits.ts';
import { boundaryOf, parseMultipart } from './multipart.ts';
import { type StagedFile, StagingFile } from './staging.ts';

/** An upload body on disk, with what Storage records about it. */
export interface ReceivedUpload {
  staged: StagedFile;
  mimetype: string;
  cacheControl: string;
  userMetadata: Record<string, unknown> | null;
}

export interface ReceiveOptions {
  stagingPath: string;
  maxBytes: number;
  allowedMimeTypes: string[] | null;
}

async function* chunksOf(reader: ReadableStreamDefaultReader<Uint8Array>): AsyncGenerator<Uint8Array> {
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    yield value;
  }
}

// Read what the client is still sending, so a rejected upload gets its answer instead of a reset connection.
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  try {
    for (;;) if ((await reader.read()).done) return;
  } catch {
    // The client went away; nothing left to drain.
  }
}

function parseUserMetadata(json: string | undefined): Record<string, unknown> | null {
  if (!json) return null;
  try {
    const value: unknown = JSON.parse(json);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    // Storage ignores metadata it cannot parse.
    return null;
  }
}

/**
 * Receives an upload the two ways supabase-js sends one: raw bytes with the type in
 * Content-Type (Buffer, ArrayBuffer, string, stream bodies), or multipart/form-data
 * with the file as a part (Blob, File, FormData bodies). The bytes go straight to a
 * staging file; the caller commits or discards it.
 */
export async function receiveUpload(request: Request, options: ReceiveOptions): Promise<ReceivedUpload> {
  const contentType = request.headers.get('content-type') ?? '';
  const reader = request.body?.getReader();
  // Held in an object because the multipart callbacks create it.
  const sink: { file?: StagingFile } = {};
  const stage = async () => {
    sink.file = await StagingFile.create(options.stagingPath, options.maxBytes);
    return sink.file;
  };
  try {
    if (contentType.toLowerCase().startsWith('multipart/form-data')) {
      const boundary = boundaryOf(contentType);
      if (!reader || !boundary) throw noContentProvided();
      const fields = new Map<string, string>();
      let mimetype = 'application/octet-stream';
      await parseMultipart(chunksOf(reader), boundary, {
        field: (name, value) => {
          // Storage reads the fields that precede the file.
          if (!sink.file) fields.set(name, value);
        },
        fileStart: async (part) => {
          mimetype = fields.get('contentType') || part.contentType || 'application/octet-stream';
          assertMimeTypeAllowed(mimetype, options.allowedMimeTypes);
          await stage();
        },
        fileData: async (chunk) => sink.file?.write(chunk),
      });
      if (!sink.file) throw noContentProvided();
      const cacheTime = fields.get('cacheControl');
      return {
        staged: await sink.file.finish(),
        mimetype,
        cacheControl: cacheTime ? `max-age=${cacheTime}` : 'no-cache',
        userMetadata: parseUserMetadata(fields.get('metadata') ?? fields.get('userMetadata')),
      };
    }

    const mimetype = contentType || 'application/octet-stream';
    assertMimeTypeAllowed(mimetype, options.allowedMimeTypes);
    const file = await stage();
    if (reader) for await (const chunk of chunksOf(reader)) await file.write(chunk);
    const encodedMetadata = request.headers.get('x-metadata');
    return {
      staged: await file.finish(),
      mimetype,
      cacheControl: request.headers.get('cache-control') ?? 'no-cache',
      userMetadata: parseUserMetadata(encodedMetadata ? Buffer.from(encodedMetadata, 'base64').toString('utf8') : undefined),
    };
  } catch (error) {
    await sink.file?.discard();
    throw error;
  } finally {
    if (reader) await drain(reader);
  }
}
