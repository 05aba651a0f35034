import { describe, expect, it } from 'vitest';
import { DISCARD_LIMIT } from '#core/bodies.ts';
import { DomainError } from '#core/errors.ts';
import { MAX_DOCUMENT_BYTES, MAX_UPLOAD_BYTES_BEFORE_FILE } from '#core/limits.ts';
import { openFilePart } from '../../src/api/uploads/multipart.ts';
import { TooLarge } from '../../src/api/uploads/streams.ts';
import { countedStream, filler } from '../support/streamed-bodies.ts';

const encoder = new TextEncoder();
const BOUNDARY = '----unit-boundary';

/** A request whose body is `chunks`, each read only when asked for; `pulled()` counts the bytes read. */
function formRequest(chunks: Iterable<Uint8Array>, headers: Record<string, string> = {}) {
  const body = countedStream(chunks);
  const request = new Request('http://api.test/ingest', {
    method: 'POST',
    body: body.stream,
    headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, ...headers },
    duplex: 'half',
  } as RequestInit);
  return { request, pulled: body.pulled };
}

const fieldPart = (name: string, value: string) =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
const filePart = (filename: string, content: string) =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: text/plain\r\n\r\n${content}\r\n--${BOUNDARY}--\r\n`;

function* bytewise(text: string): Generator<Uint8Array> {
  for (const byte of encoder.encode(text)) yield Uint8Array.of(byte);
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}

const kindOf = (error: unknown) => (error instanceof DomainError ? error.kind : String(error));

describe('openFilePart', () => {
  it('finds the file after other fields, even one byte at a time', async () => {
    const content = `Line one\r\n--${BOUNDARY.slice(0, 8)} not a boundary\r\nline three`;
    const { request } = formRequest(bytewise(fieldPart('note', 'hello') + filePart('notes.txt', content)));
    const file = await openFilePart(request);
    expect(file.filename).toBe('notes.txt');
    expect(await readAll(file.body)).toBe(content);
    expect(file.size()).toBe(encoder.encode(content).length);
    expect(file.tooLarge()).toBe(false);
    await file.settle();
  });

  it('422 for a boundary over 70 characters, before reading the body', async () => {
    const { request, pulled } = formRequest([encoder.encode(filePart('a.txt', 'x'))], {
      'content-type': `multipart/form-data; boundary=${'b'.repeat(71)}`,
    });
    const error = await openFilePart(request).catch((e: unknown) => e);
    expect(kindOf(error)).toBe('invalid');
    expect((error as Error).message).toMatch(/70 characters/);
    expect(pulled()).toBe(0);
  });

  it('413 for a declared length over the limit, before reading the body', async () => {
    const { request, pulled } = formRequest(filler(1024), { 'content-length': String(MAX_DOCUMENT_BYTES * 2) });
    expect(kindOf(await openFilePart(request).catch((e: unknown) => e))).toBe('too_large');
    expect(pulled()).toBe(0);
  });

  it('413 for fields before the file past their cap, however the bytes arrive', async () => {
    const big = 'x'.repeat(MAX_UPLOAD_BYTES_BEFORE_FILE);
    for (const chunks of [bytewise(fieldPart('note', big)), [encoder.encode(fieldPart('note', big) + filePart('a.txt', 'x'))]]) {
      const error = await openFilePart(formRequest(chunks).request).catch((e: unknown) => e);
      expect(kindOf(error)).toBe('too_large');
      expect((error as Error).message).toMatch(/before the file/);
    }
  });

  it('ends the file at 50 MB of a chunked body, and gives up on the rest', async () => {
    const head = encoder.encode(filePart('big.txt', '').split('\r\n--')[0] as string);
    const { request, pulled } = formRequest(
      (function* () {
        yield head;
        yield* filler();
      })(),
    );
    const file = await openFilePart(request);
    const reader = file.body.getReader();
    let error: unknown;
    try {
      for (;;) if ((await reader.read()).done) break;
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(TooLarge);
    expect(file.tooLarge()).toBe(true);
    await file.settle();
    // Past the file's limit the rest is read and thrown away up to DISCARD_LIMIT, then cancelled.
    expect(pulled()).toBeLessThanOrEqual(head.length + MAX_DOCUMENT_BYTES + DISCARD_LIMIT + 2 * 64 * 1024);
  });

  it('422 when there is no file field, or the body ends inside the file', async () => {
    const noFile = formRequest([encoder.encode(`${fieldPart('note', 'x')}--${BOUNDARY}--\r\n`)]).request;
    await expect(openFilePart(noFile)).rejects.toThrow(/no field named "file"/);
    const cut = formRequest([encoder.encode(filePart('a.txt', 'cut short').slice(0, -20))]).request;
    const file = await openFilePart(cut);
    await expect(readAll(file.body)).rejects.toThrow(/ended before the file was complete/);
  });
});
