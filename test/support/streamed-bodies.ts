import { request } from 'node:http';

export interface StreamedAnswer {
  status: number;
  body: any;
  /** Body bytes the client had handed to the socket when the answer's head arrived. */
  sentBeforeAnswer: number;
  /** Whether the whole body had been sent by then; false means the server answered mid-upload. */
  sentAll: boolean;
  /** From the start of the request to the answer's head. */
  ms: number;
}

/**
 * POSTs a body produced chunk by chunk (chunked, unless the headers declare a Content-Length),
 * and stops sending as soon as the answer's head arrives, so a body can be endless or much
 * larger than what the test keeps in memory. Node's http client rather than fetch: it reports
 * the answer while the request is still being written.
 */
export function streamedPost(
  url: string,
  headers: Record<string, string>,
  chunks: Iterable<Uint8Array>,
  timeoutMs = 60_000,
): Promise<StreamedAnswer> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let sent = 0;
    let sentAll = false;
    let answered = false;
    const req = request(url, { method: 'POST', headers });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms (${sent} bytes sent)`));
    }, timeoutMs);

    req.on('response', (res) => {
      answered = true;
      const head = { status: res.statusCode ?? 0, sentBeforeAnswer: sent, sentAll, ms: performance.now() - started };
      const parts: Buffer[] = [];
      res.on('data', (part: Buffer) => parts.push(part));
      const done = () => {
        clearTimeout(timer);
        req.destroy();
        const text = Buffer.concat(parts).toString('utf8');
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON
        }
        resolve({ ...head, body });
      };
      res.on('end', done);
      res.on('error', done);
    });
    req.on('error', (error) => {
      // Writing into a connection the server closed after answering is expected.
      if (answered) return;
      clearTimeout(timer);
      reject(new Error(`${error.message} after ${sent} bytes, before any answer`));
    });

    const source = chunks[Symbol.iterator]();
    const write = () => {
      while (!answered && !req.destroyed) {
        const next = source.next();
        if (next.done) {
          sentAll = true;
          req.end();
          return;
        }
        sent += next.value.byteLength;
        if (!req.write(next.value)) {
          req.once('drain', write);
          return;
        }
      }
    };
    req.flushHeaders();
    write();
  });
}

const encoder = new TextEncoder();

/** A multipart form's framing around one file, for bodies built by hand. */
export function multipartFrame(boundary: string, filename: string, before = '') {
  return {
    head: encoder.encode(
      `${before}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: text/plain\r\n\r\n`,
    ),
    tail: encoder.encode(`\r\n--${boundary}--\r\n`),
  };
}

/** `bytes` of `fill` in 64 KiB chunks (one buffer, sent again and again), or forever. */
export function* filler(bytes = Number.POSITIVE_INFINITY, fill = 0x61): Generator<Uint8Array> {
  const chunk = new Uint8Array(64 * 1024).fill(fill);
  for (let left = bytes; left > 0; left -= chunk.length) yield left >= chunk.length ? chunk : chunk.subarray(0, left);
}

/** A body over `chunks` that yields one only when it is read (nothing read ahead), counting the bytes pulled. */
export function countedStream(chunks: Iterable<Uint8Array>) {
  const source = chunks[Symbol.iterator]();
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const next = source.next();
        if (next.done) return controller.close();
        pulled += next.value.byteLength;
        controller.enqueue(next.value);
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, pulled: () => pulled };
}
