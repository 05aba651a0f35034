import { indexOfBytes } from '#core/bytes.ts';
import { invalid as invalidField } from '#core/errors.ts';

export interface FilePart {
  filename: string;
  /** The file's bytes as they arrive; nothing past them is read. */
  body: ReadableStream<Uint8Array>;
  /** Resolves once the whole request body has been read or thrown away; call before answering. */
  settle(): Promise<void>;
}

const MAX_HEADER_BYTES = 16 * 1024;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

type BodyReader = Pick<ReadableStreamDefaultReader<Uint8Array>, 'read' | 'cancel'>;

// What is read and thrown away of a body we stop using, before giving up on it.
const DRAIN_LIMIT = 64 * 1024 * 1024;

const invalid = (msg: string) => invalidField('file', msg, 'multipart');

/**
 * Finds the form field `name` in a multipart/form-data body and returns its file as
 * a stream, so an upload is never held in memory whole. Parts before it are skipped.
 */
export async function openFilePart(request: Request, name = 'file'): Promise<FilePart> {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(request.headers.get('content-type') ?? '');
  const token = boundary?.[1] ?? boundary?.[2];
  if (!token || !/^multipart\/form-data/i.test(request.headers.get('content-type') ?? '') || !request.body) {
    throw invalid('The body must be multipart/form-data with a file field');
  }
  const reader = serialReads(request.body.getReader());
  try {
    return await findFilePart(reader, token, name);
  } catch (error) {
    await drain(reader);
    throw error;
  }
}

async function findFilePart(reader: BodyReader, token: string, name: string): Promise<FilePart> {
  const delimiter = encoder.encode(`\r\n--${token}`);
  // Seeding with CRLF lets the first boundary match the same delimiter as the rest.
  let buffer = concat(encoder.encode('\r\n'), new Uint8Array());

  const pull = async () => {
    const { done, value } = await reader.read();
    if (done) return false;
    buffer = concat(buffer, value);
    return true;
  };

  for (;;) {
    // Find the next part's headers.
    let at = indexOfBytes(buffer, delimiter);
    while (at < 0) {
      if (!(await pull())) throw invalid(`The form has no field named "${name}"`);
      at = indexOfBytes(buffer, delimiter);
    }
    let headerEnd = indexOfBytes(buffer, encoder.encode('\r\n\r\n'), at + delimiter.length);
    while (headerEnd < 0) {
      if (buffer.length - at > MAX_HEADER_BYTES) throw invalid('A multipart part header is too large');
      if (!(await pull())) throw invalid(`The form has no field named "${name}"`);
      headerEnd = indexOfBytes(buffer, encoder.encode('\r\n\r\n'), at + delimiter.length);
    }
    const afterDelimiter = decoder.decode(buffer.subarray(at + delimiter.length, at + delimiter.length + 2));
    if (afterDelimiter === '--') throw invalid(`The form has no field named "${name}"`);
    const headers = decoder.decode(buffer.subarray(at + delimiter.length, headerEnd));
    buffer = buffer.subarray(headerEnd + 4);
    const disposition = /content-disposition:([^\r\n]*)/i.exec(headers)?.[1] ?? '';
    const fieldName = /\bname="([^"]*)"/i.exec(disposition)?.[1];
    if (fieldName !== name) continue;
    const filename = /\bfilename\*=UTF-8''([^;\r\n]+)/i.exec(disposition)?.[1] ?? /\bfilename="([^"]*)"/i.exec(disposition)?.[1];
    if (filename === undefined) throw invalid(`The field "${name}" must be a file`);
    return { filename: safeFilename(filename), ...partStream(reader, buffer, delimiter) };
  }
}

/** Streams bytes up to the next delimiter, holding back only a delimiter's length. */
function partStream(reader: BodyReader, start: Uint8Array, delimiter: Uint8Array): Pick<FilePart, 'body' | 'settle'> {
  let buffer = start;
  let drained: Promise<void> | undefined;
  const finish = () => {
    drained ??= drain(reader);
    return drained;
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        // Discarded: end the stream, or every pending read would pull again forever.
        if (drained) return controller.error(invalid('The upload was discarded'));
        const at = indexOfBytes(buffer, delimiter);
        if (at >= 0) {
          if (at > 0) controller.enqueue(buffer.slice(0, at));
          controller.close();
          await finish();
          return;
        }
        const safe = buffer.length - delimiter.length;
        if (safe > 0) {
          controller.enqueue(buffer.slice(0, safe));
          buffer = buffer.slice(safe);
          return;
        }
        const { done, value } = await reader.read();
        if (done) {
          drained = Promise.resolve();
          controller.error(invalid('The upload ended before the file was complete'));
          return;
        }
        buffer = concat(buffer, value);
      }
    },
    cancel: () => finish(),
  });
  return { body, settle: finish };
}

/**
 * Reads the rest of a request body and throws it away. Answering while the client is
 * still sending resets its connection (and trips up wrangler's dev proxy), so an
 * early error (415, 413) lets the body finish first, up to a limit.
 */
async function drain(reader: BodyReader): Promise<void> {
  let seen = 0;
  try {
    while (seen < DRAIN_LIMIT) {
      const { done, value } = await reader.read();
      if (done) return;
      seen += value.byteLength;
    }
    await reader.cancel();
  } catch {
    // The client went away: nothing left to drain.
  }
}

/**
 * One read at a time on the request body: workerd drops the connection when the file
 * stream and the drain have reads pending on it together.
 */
function serialReads(reader: ReadableStreamDefaultReader<Uint8Array>): BodyReader {
  let last: Promise<unknown> = Promise.resolve();
  return {
    read() {
      const next = last.then(() => reader.read());
      last = next.catch(() => {});
      return next;
    },
    cancel: (reason?: unknown) => reader.cancel(reason),
  };
}

function safeFilename(raw: string): string {
  let name = raw;
  try {
    name = decodeURIComponent(raw);
  } catch {
    // keep it as sent
  }
  // Browsers may send a full path; only the last segment is the file's name.
  name = name.split(/[\\/]/).pop() ?? '';
  name = [...name]
    .filter((ch) => ch.charCodeAt(0) > 0x1f && ch !== '\u007f')
    .join('')
    .trim()
    .slice(0, 255);
  if (!name) throw invalid('The file has no name');
  return name;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
