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

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');
const MAX_HEADER_BYTES = 16 * 1024;
// Fields carry cacheControl, contentType and user metadata (which Storage caps at 1 MiB).
const MAX_FIELD_BYTES = 2 * 1024 * 1024;

export function boundaryOf(contentType: string): string | undefined {
  const match = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const boundary = match?.[1] ?? match?.[2];
  return boundary && boundary.length <= 200 ? boundary : undefined;
}

function parseHeaders(block: string): PartHeaders {
  const headers = new Map<string, string>();
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const disposition = headers.get('content-disposition') ?? '';
  const param = (key: string) => {
    const match = new RegExp(`(?:^|;)\\s*${key}="((?:[^"\\\\]|\\\\.)*)"`, 'i').exec(disposition);
    if (match?.[1] !== undefined) return match[1].replace(/\\(.)/g, '$1');
    return new RegExp(`(?:^|;)\\s*${key}=([^;\\s]*)`, 'i').exec(disposition)?.[1];
  };
  return { name: param('name') ?? '', filename: param('filename'), contentType: headers.get('content-type') };
}

type State = 'preamble' | 'delimiter' | 'headers' | 'body' | 'done';
type PartKind = 'field' | 'file' | 'skipped';

/**
 * Streams a multipart/form-data body (RFC 7578) without holding it in memory: field
 * parts are collected, the first file part is handed over chunk by chunk, and later
 * file parts are skipped, as Storage takes one file per upload.
 */
export async function parseMultipart(
  chunks: AsyncIterable<Uint8Array>,
  boundary: string,
  visitor: MultipartVisitor,
): Promise<void> {
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  // A leading CRLF lets the first boundary line match the same delimiter as the others.
  let buffer = Buffer.from(CRLF);
  let state = 'preamble' as State;
  let kind: PartKind = 'skipped';
  let fieldName = '';
  let fieldChunks: Buffer[] = [];
  let fieldSize = 0;
  let sawFile = false;

  const emit = async (data: Buffer) => {
    if (data.length === 0) return;
    if (kind === 'file') {
      await visitor.fileData(data);
    } else if (kind === 'field') {
      fieldSize += data.length;
      if (fieldSize > MAX_FIELD_BYTES) throw invalidRequest(`multipart field ${fieldName} is too large`);
      fieldChunks.push(Buffer.from(data));
    }
  };

  const endPart = () => {
    if (kind === 'field') visitor.field(fieldName, Buffer.concat(fieldChunks).toString('utf8'));
    fieldChunks = [];
    fieldSize = 0;
  };

  // Consumes as much of the buffer as the current state allows; returns once it needs more bytes.
  const advance = async () => {
    for (;;) {
      if (state === 'done') return;
      if (state === 'preamble' || state === 'body') {
        const at = buffer.indexOf(delimiter);
        if (at === -1) {
          // Keep a tail that could be the start of a delimiter split across chunks.
          const safe = buffer.length - (delimiter.length - 1);
          if (safe > 0) {
            if (state === 'body') await emit(buffer.subarray(0, safe));
            buffer = Buffer.from(buffer.subarray(safe));
          }
          return;
        }
        if (state === 'body') {
          await emit(buffer.subarray(0, at));
          endPart();
        }
        buffer = buffer.subarray(at + delimiter.length);
        state = 'delimiter';
      } else if (state === 'delimiter') {
        if (buffer.length < 2) return;
        if (buffer[0] === 0x2d && buffer[1] === 0x2d) {
          state = 'done';
          return;
        }
        const lineEnd = buffer.indexOf(CRLF);
        if (lineEnd === -1) {
          if (buffer.length > 1024) throw invalidRequest('Malformed multipart body');
          return;
        }
        // Only transport padding may sit between a boundary and its line end.
        if (buffer.subarray(0, lineEnd).toString('latin1').trim() !== '') throw invalidRequest('Malformed multipart body');
        buffer = buffer.subarray(lineEnd + CRLF.length);
        state = 'headers';
      } else {
        let blockEnd: number;
        let bodyStart: number;
        if (buffer.length >= 2 && buffer[0] === 0x0d && buffer[1] === 0x0a) {
          // A part with no headers at all.
          blockEnd = 0;
          bodyStart = CRLF.length;
        } else {
          blockEnd = buffer.indexOf(HEADER_END);
          if (blockEnd === -1) {
            if (buffer.length > MAX_HEADER_BYTES) throw invalidRequest('Multipart part headers are too large');
            return;
          }
          bodyStart = blockEnd + HEADER_END.length;
        }
        const part = parseHeaders(buffer.subarray(0, blockEnd).toString('utf8'));
        buffer = buffer.subarray(bodyStart);
        if (part.filename === undefined) {
          kind = 'field';
          fieldName = part.name;
        } else if (!sawFile) {
          sawFile = true;
          kind = 'file';
          await visitor.fileStart(part);
        } else {
          kind = 'skipped';
        }
        state = 'body';
      }
    }
  };

  for await (const chunk of chunks) {
    buffer = buffer.length === 0 ? Buffer.from(chunk) : Buffer.concat([buffer, chunk]);
    await advance();
    if (state === 'done') return;
  }
  await advance();
  if (state !== 'done') throw invalidRequest('Unexpected end of multipart body');
}
