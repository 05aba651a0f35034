import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { runExample } from '../../client/example.ts';
import { ask, createRagClient, type QueryEvent, type RagClient } from '../../client/index.ts';
import { signUp, stack, type TestUser } from '../support/client.ts';

/** The password devstack/harness/auth-client.ts signs every test user up with. */
const PASSWORD = 'correct horse battery';

let user: TestUser;
let rag: RagClient;
let printed = '';
let example: Awaited<ReturnType<typeof runExample>>;

beforeAll(async () => {
  user = await signUp('client-example');
  rag = createRagClient({ baseUrl: stack.apiUrl, token: user.token });
  example = await runExample({
    apiUrl: stack.apiUrl,
    supabaseUrl: stack.supabaseUrl,
    anonKey: stack.anonKey,
    email: user.email,
    password: PASSWORD,
    write: (text) => {
      printed += text;
    },
  });
}, 180_000);

describe('client/example.ts against the worker', () => {
  it('uploads with an API key, waits for the job and prints an answer that cites the document', async () => {
    const { data: job, error } = await rag.GET('/ingest/jobs/{job_id}', { params: { path: { job_id: example.jobId } } });
    expect(error).toBeUndefined();
    expect(job).toMatchObject({ status: 'succeeded', collection_id: example.collectionId, source: 'handbook-1p.docx' });

    expect(example.answer.trim()).not.toBe('');
    expect(example.sources.length).toBeGreaterThan(0);
    const cited = [...example.answer.matchAll(/\[(\d+)\]/g)].map((match) => example.sources[Number(match[1]) - 1]?.source);
    expect(cited.length).toBeGreaterThan(0);
    expect(cited).toContain('handbook-1p.docx');

    // What it printed: the answer as it streamed, then one line per source.
    expect(printed.startsWith(example.answer)).toBe(true);
    expect(printed).toContain('\n\nSources:\n[1] handbook-1p.docx');
  });
});

describe('the typed client', () => {
  it('reads the stream of POST /query/: metadata first, then tokens, then done', async () => {
    const asked = await ask(rag, { question: 'What does the Handbook not create?', collection_id: example.collectionId });
    if (asked.error) throw new Error(JSON.stringify(asked.error));
    expect(asked.response.headers.get('Content-Type')).toMatch(/^text\/event-stream/);
    const events: QueryEvent[] = [];
    for await (const event of asked.data) events.push(event);

    const kinds = events.map((event) => event.event);
    expect(kinds[0]).toBe('metadata');
    expect(kinds.at(-1)).toBe('done');
    expect(kinds.slice(1, -1).every((kind) => kind === 'token')).toBe(true);
    expect(kinds.length).toBeGreaterThan(2);

    const [first, last] = [events[0], events.at(-1)];
    if (first?.event !== 'metadata' || last?.event !== 'done') throw new Error('unreachable: checked above');
    expect(first.data.sources[0]).toMatchObject({ source: 'handbook-1p.docx', chunk_type: 'text' });
    expect(Number.isInteger(first.data.retrieval_latency_ms)).toBe(true);
    expect(last.data.time_to_first_token_ms).toBeLessThanOrEqual(last.data.generation_latency_ms);
    const answer = events.map((event) => (event.event === 'token' ? event.data.token : '')).join('');
    expect(answer).toMatch(/\[\d+\]/);
  });

  it('answers a 4xx as the typed `error`, and throws nothing', async () => {
    const missing = await ask(rag, { question: 'Anything?', collection_id: randomUUID() });
    expect(missing.data).toBeUndefined();
    expect(missing.response.status).toBe(404);
    expect(missing.error).toEqual({
      detail: 'Collection not found',
      code: 'not_found',
      request_id: missing.response.headers.get('X-Request-Id'),
    });

    const invalid = await rag.POST('/collections', { body: { name: '   ' } });
    expect(invalid.response.status).toBe(422);
    // `code` is typed as the API's error codes, `detail` as a message or the list of failed fields.
    expect(invalid.error?.code).toBe('validation_failed');
    expect(Array.isArray(invalid.error?.detail) && invalid.error.detail.map((issue) => issue.loc)).toEqual([['body', 'name']]);

    const stranger = createRagClient({ baseUrl: stack.apiUrl, apiKey: 'rag_not-a-key' });
    const refused = await stranger.GET('/collections');
    expect(refused.response.status).toBe(401);
    expect(refused.error?.code).toBe('invalid_api_key');
  });
});
