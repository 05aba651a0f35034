import { discardRest } from '#core/bodies.ts';
import { MAX_DOCUMENT_BYTES, MAX_UPLOAD_BODY_BYTES, MAX_UPLOAD_BYTES_BEFORE_FILE } from '#core/limits.ts';
import { ByteQueue } from './byte-queue.ts';
import { fieldsTooLarge, malformedUpload, uploadTooLarge } from './errors.ts';
import { safeFilename } from './file-name.ts';
import { TooLarge } from './streams.ts';

export interface FilePart {
  filename: string;
  /** The text fields that came before the file, by name (they share MAX_UPLOAD_BYTES_BEFORE_FILE). */
  fields: Record<string, string>;
  /** The file's bytes as they arrive; nothing past them is read. Errors with TooLarge past the file limit. */
  body: ReadableStream<Uint8Array>;
  /** The file's bytes passed on so far. */
  size(): number;
  /** Whether the file went past its limit (its stream then errors with TooLarge). */
  tooLarge(): boolean;
  /** Resolves once the rest of the request body has been read and thrown away; call before answering. */
  settle(): Promise<void>;
}

/** RFC 2046 §5.1.1: a boundary is 1 to 70 characters. */
const MAX_BOUNDARY_LENGTH = 70;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const CRLF = encoder.encode('\r\n');
const HEADER_END = encoder.encode('\r\n\r\n');
const CLOSE = encoder.encode('--');

interface BodyReader {
  read(): Promise<ReadableStreamReadResult<Uint8Array>>;
  /** Reads the rest and throws it away (see discardRest); call before answering. */
  discard(): Promise<void>;
}

/**
 * Finds the form field `name` in a multipart/form-data body and returns its file as a stream,
 * so an upload is never held in memory whole. Everything that can be refused without the body
 * (its type, its boundary, a declared length over the limit) is refused before reading it.
 * Then the bytes are counted as they stream, whatever Content-Length says (or when a chunked
 * body says nothing): the parts before the file may hold MAX_UPLOAD_BYTES_BEFORE_FILE, the file
 * MAX_DOCUMENT_BYTES; what follows the file is discarded (see discardRest).
 */
export async function openFilePart(request: Request, name = 'file'): Promise<FilePart> {
  const type = request.headers.get('content-type') ?? '';
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(type);
  const token = boundary?.[1] ?? boundary?.[2];
  if (!token || !/^multipart\/form-data/i.test(type) || !request.body) {
    throw malformedUpload('The body must be multipart/form-data with a file field');
  }
  if (token.length > MAX_BOUNDARY_LENGTH) {
    throw malformedUpload(`The multipart boundary is longer than ${MAX_BOUNDARY_LENGTH} characters (RFC 2046)`);
  }
  if (Number(request.headers.get('content-length') ?? 0) > MAX_UPLOAD_BODY_BYTES) throw uploadTooLarge();
  const reader = serialReader(request.body);
  try {
    return await findFilePart(reader, token, name);
  } catch (error) {
    await reader.discard();
    throw error;
  }
}

async function findFilePart(reader: BodyReader, token: string, name: string): Promise<FilePart> {
  const delimiter = encoder.encode(`\r\n--${token}`);
  const queue = new ByteQueue();
  // Seeding with CRLF lets the first boundary match the same delimiter as the rest.
  queue.push(CRLF);
  // Where the queue's first byte sits in the body (the seed is not part of it).
  let offset = -CRLF.length;
  const noField = () => malformedUpload(`The form has no field named "${name}"`);
  const fields: Record<string, string> = {};
  // The field whose value runs up to the next delimiter.
  let reading: string | undefined;

  const pull = async () => {
    const { done, value } = await reader.read();
    if (done) throw noField();
    queue.push(value);
  };
  /** Where `needle` starts, at or after `from`: each byte is scanned once, and never past the cap. */
  const find = async (needle: Uint8Array, from: number) => {
    let scanFrom = from;
    for (;;) {
      const at = queue.indexOf(needle, scanFrom);
      const past = at >= 0 ? offset + at : offset + queue.length - needle.length;
      if (past > MAX_UPLOAD_BYTES_BEFORE_FILE) throw fieldsTooLarge();
      if (at >= 0) return at;
      // Only the last bytes, which may hold the start of `needle`, are scanned again.
      scanFrom = Math.max(from, queue.length - needle.length + 1);
      await pull();
    }
  };
  const consume = (count: number) => {
    queue.consume(count);
    offset += count;
  };

  for (;;) {
    // The next part: what came before its delimiter was another field's value.
    const valueEnd = await find(delimiter, 0);
    if (reading !== undefined && !Object.hasOwn(fields, reading)) {
      fields[reading] = decoder.decode(queue.view().subarray(0, valueEnd));
    }
    consume(valueEnd);
    while (queue.length < delimiter.length + CLOSE.length) await pull();
    if (queue.indexOf(CLOSE, delimiter.length) === delimiter.length) throw noField();
    const headerEnd = await find(HEADER_END, delimiter.length);
    const headers = decoder.decode(queue.view().subarray(delimiter.length, headerEnd));
    consume(headerEnd + HEADER_END.length);
    const disposition = /content-disposition:([^\r\n]*)/i.exec(headers)?.[1] ?? '';
    const fieldName = /\bname="([^"]*)"/i.exec(disposition)?.[1];
    if (fieldName !== name) {
      // Only plain fields are kept: a file part before the file is skipped, as before.
      reading = fieldName !== undefined && !/\bfilename\*?=/i.test(disposition) ? fieldName : undefined;
      continue;
    }
    const filename = /\bfilename\*=UTF-8''([^;\r\n]+)/i.exec(disposition)?.[1] ?? /\bfilename="([^"]*)"/i.exec(disposition)?.[1];
    if (filename === undefined) throw malformedUpload(`The field "${name}" must be a file`);
    return { filename: safeFilename(filename), fields, ...partStream(reader, queue, delimiter) };
  }
}

/** Streams the bytes up to the next delimiter, holding back only what could be its start. */
function partStream(reader: BodyReader, queue: ByteQueue, delimiter: Uint8Array): Omit<FilePart, 'filename' | 'fields'> {
  let size = 0;
  let overLimit = false;
  let discarded: Promise<void> | undefined;
  const finish = () => {
    discarded ??= reader.discard();
    return discarded;
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const pass = (bytes: Uint8Array) => {
        size += bytes.length;
        if (size <= MAX_DOCUMENT_BYTES) return controller.enqueue(bytes);
        overLimit = true;
        controller.error(new TooLarge(MAX_DOCUMENT_BYTES));
      };
      for (;;) {
        // Discarded: end the stream, or every pending read would pull again forever.
        if (discarded) return controller.error(malformedUpload('The upload was discarded'));
        const at = queue.indexOf(delimiter);
        if (at >= 0) {
          if (at > 0) pass(queue.take(at));
          if (!overLimit) controller.close();
          await finish();
          return;
        }
        const safe = queue.length - (delimiter.length - 1);
        if (safe > 0) {
          pass(queue.take(safe));
          if (overLimit) await finish();
          return;
        }
        const { done, value } = await reader.read();
        if (done) {
          discarded = Promise.resolve();
          controller.error(malformedUpload('The upload ended before the file was complete'));
          return;
        }
        queue.push(value);
      }
    },
    cancel: () => finish(),
  });
  return {
    body,
    size: () => size,
    tooLarge: () => overLimit,
    settle: finish,
  };
}

/**
 * One read at a time on the request body: workerd drops the connection when the file stream
 * and the discarding have reads pending on it together.
 */
function serialReader(stream: ReadableStream<Uint8Array>): BodyReader {
  const reader = stream.getReader();
  let last: Promise<unknown> = Promise.resolve();
  const serially = <T>(step: () => Promise<T>): Promise<T> => {
    const next = last.then(step);
    last = next.catch(() => {});
    return next;
  };
  return {
    read: () => serially(() => reader.read()),
    discard: () => serially(() => discardRest(reader)),
  };
}
