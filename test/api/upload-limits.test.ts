import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_DOCUMENT_BYTES, MAX_UPLOAD_BYTES_BEFORE_FILE } from '#core/limits.ts';
import { freePort } from '../../devstack/ports.ts';
import { createApp } from '../../src/api/app.ts';
import { db, stack } from '../support/client.ts';
import { type Cast, castWithCollection } from '../support/fixtures.ts';
import { countedStream, filler, multipartFrame, streamedPost } from '../support/streamed-bodies.ts';

// Uploads whose bodies are too large, endless or malformed: each is refused with the
// contract's status, and what can be decided without the body is decided before reading it.
let cast: Cast;
let collectionId: string;

beforeAll(async () => {
  ({ cast, collectionId } = await castWithCollection('Upload limits'));
});

const encoder = new TextEncoder();
const BOUNDARY = 'upload-limits-boundary';

function* chain(...parts: Iterable<Uint8Array>[]): Generator<Uint8Array> {
  for (const part of parts) yield* part;
}

const headersFor = (token: string, extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${token}`,
  'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
  ...extra,
});

const uploadPath = () => `/ingest/?collection_id=${collectionId}`;

/** A form whose first field is `bytes` long, then a small file: parsed first, it would be a 413. */
function fieldThenFile(bytes: number, filename: string) {
  const field = encoder.encode(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="note"\r\n\r\n`);
  const { head, tail } = multipartFrame(BOUNDARY, filename, '\r\n');
  return chain([field], filler(bytes, 0x62), [head, encoder.encode('After a field.\n'), tail]);
}

const documentsNamed = async (name: string) => {
  const [row] = await db()<{ count: number }[]>`
    select count(*)::int as count from documents where collection_id = ${collectionId} and name = ${name}`;
  return row?.count ?? -1;
};

/**
 * The API app in this process, on the stack's settings: `wrangler dev` drains every unread
 * request body before its answer goes out (its ensure-req-body-drained middleware), which hides
 * whether the app read it. Here an endless body shows it: the answer comes with no byte pulled.
 */
describe('refused before a byte of the body is read (the app in process)', () => {
  const app = createApp();
  const pending: Promise<unknown>[] = [];
  const ctx = { waitUntil: (work: Promise<unknown>) => pending.push(work), passThroughOnException() {}, props: {} };
  const env = (vars: Record<string, string> = {}) => ({
    ...stack.apiVars,
    ...vars,
    HYPERDRIVE: { connectionString: stack.databaseUrl },
  });
  afterAll(() => Promise.allSettled(pending));

  async function endlessUpload(token: string, vars?: Record<string, string>, extra?: Record<string, string>) {
    const body = countedStream(chain([multipartFrame(BOUNDARY, 'endless.txt').head], filler()));
    const request = new Request(`http://api.test${uploadPath()}`, {
      method: 'POST',
      headers: headersFor(token, extra),
      body: body.stream,
      duplex: 'half',
    } as RequestInit);
    const response = await app.fetch(request, env(vars), ctx as never);
    await body.stream.cancel().catch(() => {});
    return { status: response.status, body: (await response.json()) as any, pulled: body.pulled() };
  }

  it('403 for a member who may not ingest', async () => {
    const answer = await endlessUpload(cast.memberQuery.token);
    expect(answer).toMatchObject({ status: 403, pulled: 0, body: { code: 'forbidden' } });
  });

  it('503 when the queue cannot be reached', async () => {
    // Its own settings object, so its own queue adapter: no earlier success vouches for it.
    const deadQueue = { QSTASH_URL: `http://127.0.0.1:${await freePort()}/qstash` };
    const answer = await endlessUpload(cast.owner.token, deadQueue);
    expect(answer).toMatchObject({ status: 503, pulled: 0, body: { code: 'service_unavailable' } });
    expect(answer.body.detail).toBe('The ingestion queue is unavailable; try again shortly');
    expect(await documentsNamed('endless.txt')).toBe(0);
  });

  it('413 for a declared Content-Length over the limit', async () => {
    const answer = await endlessUpload(cast.owner.token, {}, { 'content-length': String(MAX_DOCUMENT_BYTES * 2) });
    expect(answer).toMatchObject({ status: 413, pulled: 0, body: { code: 'payload_too_large' } });
  });

  it('422 for a boundary over 70 characters (RFC 2046)', async () => {
    const long = `multipart/form-data; boundary=${'b'.repeat(71)}`;
    const answer = await endlessUpload(cast.owner.token, {}, { 'content-type': long });
    expect(answer).toMatchObject({ status: 422, pulled: 0 });
    expect(answer.body.detail[0].msg).toMatch(/70 characters/);
  });
});

describe('the API worker', () => {
  it('refuses a member who may not ingest before looking at the form: 403, not the 413 the fields would get', async () => {
    const answer = await streamedPost(
      `${stack.apiUrl}${uploadPath()}`,
      headersFor(cast.memberQuery.token),
      fieldThenFile(MAX_UPLOAD_BYTES_BEFORE_FILE * 4, 'forbidden.txt'),
    );
    expect(answer.status).toBe(403);
  });

  it('413 for a chunked body whose file passes 50 MB, with nothing stored', async () => {
    const { head, tail } = multipartFrame(BOUNDARY, 'chunked-big.txt');
    const answer = await streamedPost(
      `${stack.apiUrl}${uploadPath()}`,
      headersFor(cast.owner.token),
      chain([head], filler(MAX_DOCUMENT_BYTES + 2 * 1024 * 1024), [tail]),
      120_000,
    );
    expect(answer.status).toBe(413);
    expect(answer.body.code).toBe('payload_too_large');
    expect(await documentsNamed('chunked-big.txt')).toBe(0);
  });

  it('413 for a declared length over the limit', async () => {
    const bytes = MAX_DOCUMENT_BYTES + 1024 * 1024;
    const { head, tail } = multipartFrame(BOUNDARY, 'declared.txt');
    const declared = String(head.length + bytes + tail.length);
    const answer = await streamedPost(
      `${stack.apiUrl}${uploadPath()}`,
      headersFor(cast.owner.token, { 'content-length': declared }),
      chain([head], filler(bytes), [tail]),
      120_000,
    );
    expect(answer.status).toBe(413);
  });

  it('413 for 50 MB of form fields before the file, answered in linear time', async () => {
    const answer = await streamedPost(
      `${stack.apiUrl}${uploadPath()}`,
      headersFor(cast.owner.token),
      fieldThenFile(MAX_DOCUMENT_BYTES, 'after-field.txt'),
      120_000,
    );
    expect(answer.status).toBe(413);
    expect(answer.body.detail).toMatch(new RegExp(`before the file.*${MAX_UPLOAD_BYTES_BEFORE_FILE / 1024} KB`));
    expect(await documentsNamed('after-field.txt')).toBe(0);
    console.info(`50 MB of fields before the file: 413 after ${Math.round(answer.ms)} ms`);
  });

  it('accepts a small field before the file, and a boundary of exactly 70 characters', async () => {
    const small = await streamedPost(
      `${stack.apiUrl}${uploadPath()}`,
      headersFor(cast.owner.token),
      fieldThenFile(5, 'small-field.txt'),
    );
    expect(small.status, JSON.stringify(small.body)).toBe(200);

    const seventy = 'b'.repeat(70);
    const { head, tail } = multipartFrame(seventy, 'seventy.txt');
    const answer = await streamedPost(
      `${stack.apiUrl}${uploadPath()}`,
      { authorization: `Bearer ${cast.owner.token}`, 'content-type': `multipart/form-data; boundary=${seventy}` },
      [head, encoder.encode('A boundary of seventy characters.\n'), tail],
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  });

  it('shows the file under its name without bidi controls', async () => {
    const { head, tail } = multipartFrame(BOUNDARY, 'invoice_\u202Efdp.exe.txt');
    const answer = await streamedPost(`${stack.apiUrl}${uploadPath()}`, headersFor(cast.owner.token), [
      head,
      encoder.encode('Named with an override.\n'),
      tail,
    ]);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(await documentsNamed('invoice_fdp.exe.txt')).toBe(1);
  });
});
