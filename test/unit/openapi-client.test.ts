import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { DESCRIPTION_FILE, describeApi, generateClientFiles, TYPES_FILE } from '../../client/generate.ts';
import { createRagClient, type QueryEvent, readQueryStream, uploadFile } from '../../client/index.ts';

const root = new URL('../../', import.meta.url);

/** Where two texts part, for a message that says more than "not equal" about 200 KB of text. */
function firstDifference(expected: string, actual: string): string {
  const a = expected.split('\n');
  const b = actual.split('\n');
  const line = a.findIndex((text, i) => text !== b[i]);
  const at = line === -1 ? a.length : line;
  return `first difference at line ${at + 1}:\n  committed: ${JSON.stringify(a[at])}\n  generated: ${JSON.stringify(b[at])}`;
}

describe('the committed client files', () => {
  let generated: Awaited<ReturnType<typeof generateClientFiles>>;
  beforeAll(async () => {
    generated = await generateClientFiles();
  }, 120_000);

  for (const file of [DESCRIPTION_FILE, TYPES_FILE] as const) {
    it(`${file} is what the routes make now`, async () => {
      const committed = await readFile(new URL(file, root), 'utf8');
      const fresh = generated[file];
      expect(
        fresh === committed,
        `${file} is stale: run \`npm run openapi\` and commit the result (${firstDifference(committed, fresh)})`,
      ).toBe(true);
    });
  }
});

describe('the description', () => {
  const document = describeApi();

  it('names every operation, once', () => {
    const methods = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options', 'trace'] as const;
    const operations = Object.entries({ ...document.paths, ...document.webhooks }).flatMap(([path, item]) =>
      methods.flatMap((method) => {
        const operation = (item as Record<string, { operationId?: string } | undefined>)[method];
        return operation ? [{ at: `${method.toUpperCase()} ${path}`, id: operation.operationId }] : [];
      }),
    );
    expect(operations.length).toBeGreaterThan(20);
    const unnamed = operations.filter((operation) => !operation.id);
    expect(unnamed.map((operation) => operation.at)).toEqual([]);
    const ids = operations.flatMap((operation) => (operation.id ? [operation.id] : []));
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
  });

  it('describes the events of POST /query/ as components, referenced from its stream', () => {
    const schemas = document.components?.schemas ?? {};
    for (const name of ['QueryMetadataEvent', 'QueryTokenEvent', 'QueryDoneEvent', 'QueryErrorEvent', 'QueryEvent'])
      expect(schemas, name).toHaveProperty(name);
    expect(schemas.QueryMetadataEvent).toMatchObject({
      required: ['sources', 'embedding_latency_ms', 'retrieval_latency_ms', 'rerank'],
    });

    const ok = document.paths?.['/query']?.post?.responses?.['200'] as any;
    const stream = ok.content['text/event-stream'];
    expect(stream['x-sse-event']).toEqual({ $ref: '#/components/schemas/QueryEvent' });
    // Each `event` name with its payload's component.
    const events = Object.fromEntries(
      (schemas.QueryEvent as any).oneOf.map((event: any) => [event.properties.event.enum[0], event.properties.data.$ref]),
    );
    expect(events).toEqual({
      metadata: '#/components/schemas/QueryMetadataEvent',
      token: '#/components/schemas/QueryTokenEvent',
      done: '#/components/schemas/QueryDoneEvent',
      error: '#/components/schemas/QueryErrorEvent',
    });
  });
});

/** A response whose body arrives in exactly these pieces; `cancelled` says whether the reader let go early. */
function streamed(pieces: string[]) {
  const state = { cancelled: false };
  const encoder = new TextEncoder();
  let next = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const piece = pieces[next++];
      if (piece === undefined) controller.close();
      else controller.enqueue(encoder.encode(piece));
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { response: new Response(body, { headers: { 'Content-Type': 'text/event-stream' } }), state };
}

async function collect(events: AsyncIterable<QueryEvent>): Promise<QueryEvent[]> {
  const seen: QueryEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

describe('readQueryStream', () => {
  const metadata = { sources: [], embedding_latency_ms: 0, retrieval_latency_ms: 3 };

  it('parses events split anywhere, in any line ending, and skips comments, unknown events and an unfinished tail', async () => {
    const wire = [
      `: a comment\n\nevent: metadata\ndata: ${JSON.stringify(metadata)}\n\n`,
      'event: tok',
      'en\r\ndata: {"token":"Hé',
      'llo"}\r\n\r\n',
      'event: progress\ndata: {}\n\n',
      'event: token\rdata: {"token":" world"}\r\r',
      'event: done\ndata: {"generation_latency_ms":5,"time_to_first_token_ms":1,"evaluation_id":"e1"}\n\n',
      'event: token\ndata: {"token":"never finished"}\n',
    ].join('');
    // Cut the bytes in the middle of the é as well as everywhere else.
    const bytes = new TextEncoder().encode(wire);
    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < bytes.length; at += 7) controller.enqueue(bytes.slice(at, at + 7));
        controller.close();
      },
    });
    const events = await collect(readQueryStream(chunks));
    expect(events).toEqual([
      { event: 'metadata', data: metadata },
      { event: 'token', data: { token: 'Héllo' } },
      { event: 'token', data: { token: ' world' } },
      { event: 'done', data: { generation_latency_ms: 5, time_to_first_token_ms: 1, evaluation_id: 'e1' } },
    ]);
  });

  it('cancels the body when the reader stops early, and refuses a response that is not a stream', async () => {
    const { response, state } = streamed([`event: metadata\ndata: ${JSON.stringify(metadata)}\n\n`, 'event: token\n']);
    for await (const event of readQueryStream(response)) if (event.event === 'metadata') break;
    expect(state.cancelled).toBe(true);

    const refused = new Response('{"detail":"Not found"}', { status: 404, headers: { 'Content-Type': 'application/json' } });
    await expect(collect(readQueryStream(refused))).rejects.toThrow(/404/);
  });
});

describe('createRagClient', () => {
  it('sends a bearer token or an API key, never both', async () => {
    const seen: Request[] = [];
    const fetch = async (request: Request) => {
      seen.push(request);
      return Response.json({ job_id: 'j', document_id: 'd', duplicate: false });
    };
    await createRagClient({ baseUrl: 'http://api.test/', token: 't0ken', fetch }).GET('/collections');
    await uploadFile(createRagClient({ baseUrl: 'http://api.test', apiKey: 'rag_k3y', fetch }), {
      file: new Blob(['# Notes\n']),
      fileName: 'notes.md',
      collection_id: 'c1',
    });
    expect(seen.map((r) => [r.method, r.url, r.headers.get('Authorization'), r.headers.get('X-API-Key')])).toEqual([
      ['GET', 'http://api.test/collections', 'Bearer t0ken', null],
      ['POST', 'http://api.test/ingest?collection_id=c1', null, 'rag_k3y'],
    ]);
    const form = await seen[1]!.formData();
    expect(seen[1]!.headers.get('Content-Type')).toMatch(/^multipart\/form-data; boundary=/);
    const fields: string[] = [];
    form.forEach((_, name) => {
      fields.push(name);
    });
    expect(fields).toEqual(['file']);
    expect(form.get('file')).toMatchObject({ name: 'notes.md', size: 8 });

    expect(() => createRagClient({ baseUrl: 'http://api.test', token: 't', apiKey: 'k' })).toThrow(/not both/);
  });
});
