import { beforeAll, describe, expect, it } from 'vitest';
import { api, db, type Schema, stack } from '../support/client.ts';
import { type Cast, castUsers, type SharedCollection, sharedCollection } from '../support/fixtures.ts';
import { waitForJob } from '../support/ingest.ts';
import { askQuestion, dataOf } from '../support/sse.ts';

let cast: Cast;
let fx: SharedCollection;

beforeAll(async () => {
  cast = await castUsers();
  fx = await sharedCollection(cast, 'Answers');
  const page = await api('POST', '/ingest/url', {
    token: cast.owner.token,
    body: { url: `${stack.pagesUrl}/article.html`, collection_id: fx.collectionId },
  });
  expect((await waitForJob(cast.owner.token, page.body.job_id)).status).toBe('succeeded');
}, 60_000);

async function evaluationsOf(userId: string) {
  return db()<{ id: string; question: string; answer: string; engine: string; session_id: string | null; top_k: number }[]>`
    select id, question, answer, engine, session_id, top_k from evaluations where user_id = ${userId} order by created_at`;
}

async function eventually<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('POST /query/', () => {
  it('streams metadata, then tokens, then done; the answer cites its sources', async () => {
    const { status, contentType, events } = await askQuestion(cast.owner.token, {
      question: 'How does a tidal barrage work?',
      collection_id: fx.collectionId,
      session_id: fx.sessions.owner,
    });
    expect(status).toBe(200);
    expect(contentType).toMatch(/^text\/event-stream/);
    const kinds = events.map((e) => e.event);
    expect(kinds[0]).toBe('metadata');
    expect(kinds.at(-1)).toBe('done');
    expect(kinds.slice(1, -1).every((k) => k === 'token')).toBe(true);
    expect(kinds.length).toBeGreaterThan(3);

    const metadata = dataOf(events, 'metadata');
    expect(metadata?.sources.length).toBeGreaterThan(0);
    expect(metadata?.sources[0]).toMatchObject({ source: `${stack.pagesUrl}/article.html`, chunk_type: 'text', image_url: null });
    expect(Number.isInteger(metadata?.embedding_latency_ms) && Number.isInteger(metadata?.retrieval_latency_ms)).toBe(true);

    const answer = events
      .filter((e) => e.event === 'token')
      .map((e) => e.data.token)
      .join('');
    expect(answer).toMatch(/barrage/i);
    const cited = [...answer.matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1]));
    expect(cited.length).toBeGreaterThan(0);
    expect(cited.every((n) => n >= 1 && n <= (metadata?.sources.length ?? 0))).toBe(true);

    const done = dataOf(events, 'done');
    expect(Number.isInteger(done?.generation_latency_ms) && Number.isInteger(done?.time_to_first_token_ms)).toBe(true);
    expect(done?.time_to_first_token_ms).toBeLessThanOrEqual(done?.generation_latency_ms as number);

    // Persisted after the stream: the session's messages, its title, and an evaluation record.
    const messages = await eventually(
      () => api('GET', `/chat/${fx.collectionId}/sessions/${fx.sessions.owner}`, { token: cast.owner.token }),
      (r) => r.body.length >= 2,
    );
    expect(messages.body.slice(-2).map((m: { role: string }) => m.role)).toEqual(['user', 'assistant']);
    expect(messages.body.at(-1)).toMatchObject({ content: answer, sources: metadata?.sources });
    const [evaluation] = await evaluationsOf(cast.owner.id);
    expect(evaluation).toMatchObject({
      question: 'How does a tidal barrage work?',
      answer,
      session_id: fx.sessions.owner,
      top_k: 5,
    });
    expect(evaluation?.engine).toContain('devstack-extractive');
  });

  it('scores every answer in the background, visible through the evaluation endpoints', async () => {
    await askQuestion(cast.memberQuery.token, { question: 'What is a tidal stream generator?', collection_id: fx.collectionId });
    const listed = await eventually(
      () => api('GET', `/evals/${fx.collectionId}?limit=200`, { token: cast.memberQuery.token }),
      (r) => r.body.some((e) => e.question === 'What is a tidal stream generator?' && e.faithfulness_score !== null),
      20_000,
    );
    const record = listed.body.find((e) => e.question === 'What is a tidal stream generator?');
    expect(record).toMatchObject({
      scorer: expect.stringContaining('lexical'),
      scorer_error: null,
      retrieval_strategy: 'similarity',
    });
    // The extractive engine quotes its sources, so the lexical scorer finds it faithful.
    expect(record?.faithfulness_score).toBeGreaterThanOrEqual(0.9);
    expect(record?.context_relevance_score).toBeGreaterThan(0);
    expect(record?.context_relevance_score).toBeLessThanOrEqual(1);
    const stats = await api('GET', `/evals/${fx.collectionId}/stats`, { token: cast.owner.token });
    expect(stats.body.scored_queries).toBeGreaterThanOrEqual(1);
  });

  it('sharing a session copies its real messages with their sources; removing a member deletes theirs', async () => {
    await askQuestion(cast.memberIngest.token, {
      question: 'Why are tides attractive to grid operators?',
      collection_id: fx.collectionId,
      session_id: fx.sessions.memberIngest,
    });
    const original = await eventually(
      () => api('GET', `/chat/${fx.collectionId}/sessions/${fx.sessions.memberIngest}`, { token: cast.memberIngest.token }),
      (r) => r.body.length >= 2,
    );
    expect(original.body.at(-1)?.sources.length).toBeGreaterThan(0);
    const shared = await api('POST', `/chat/${fx.collectionId}/sessions/${fx.sessions.memberIngest}/share`, {
      token: cast.memberIngest.token,
      body: { target_user_id: cast.memberQuery.id },
    });
    expect(shared.status).toBe(200);
    const copy = await api('GET', `/chat/${fx.collectionId}/sessions/${shared.body.new_session_id}`, {
      token: cast.memberQuery.token,
    });
    const strip = (messages: Schema<'ChatMessage'>[]) =>
      messages.map(({ role, content, sources }) => ({ role, content, sources }));
    expect(strip(copy.body)).toEqual(strip(original.body));

    const removed = await api('DELETE', `/collections/${fx.collectionId}/members/${cast.memberIngest.id}`, {
      token: cast.owner.token,
    });
    expect(removed.status).toBe(200);
    const [{ count } = { count: -1 }] = await db()<{ count: number }[]>`
      select count(*)::int as count from chat_sessions where user_id = ${cast.memberIngest.id} and collection_id = ${fx.collectionId}`;
    expect(count).toBe(0);
    // The copy belongs to the member it was shared with, and stays.
    expect(
      (await api('GET', `/chat/${fx.collectionId}/sessions/${shared.body.new_session_id}`, { token: cast.memberQuery.token }))
        .status,
    ).toBe(200);
  });

  it('an untitled session takes the first question, shortened, as its title, and moves up the list', async () => {
    const created = await api('POST', `/chat/${fx.collectionId}/sessions`, { token: cast.owner.token, body: {} });
    expect(created.body.title).toBeNull();
    const question = `How does a tidal barrage work, and ${'why it matters for the grid and the estuary '.repeat(4)}?`;
    await askQuestion(cast.owner.token, { question, collection_id: fx.collectionId, session_id: created.body.id });
    const sessions = await eventually(
      () => api('GET', `/chat/${fx.collectionId}/sessions`, { token: cast.owner.token }),
      (r) => r.body[0]?.title !== null && r.body[0]?.id === created.body.id,
    );
    const [first] = sessions.body;
    expect(first?.id).toBe(created.body.id);
    expect(first?.title?.length).toBeLessThanOrEqual(100);
    expect(first?.title?.startsWith('How does a tidal barrage work')).toBe(true);
    expect((first?.updated_at ?? '') > created.body.updated_at).toBe(true);
  });

  it('says so when the documents do not contain the answer', async () => {
    const { events } = await askQuestion(cast.memberQuery.token, {
      question: 'What is the boiling point of tungsten?',
      collection_id: fx.collectionId,
    });
    const answer = events
      .filter((e) => e.event === 'token')
      .map((e) => e.data.token)
      .join('');
    expect(answer).toMatch(/do not contain/i);
    expect(events.at(-1)?.event).toBe('done');
  });

  it('refuses before the first byte, with the contract status and a JSON error', async () => {
    const ask = (token: string, body: Record<string, unknown>) => askQuestion(token, body);
    const question = 'How does a tidal barrage work?';
    expect((await ask(cast.stranger.token, { question, collection_id: fx.collectionId })).status).toBe(403);
    expect((await ask(cast.admin.token, { question, collection_id: fx.collectionId })).status).toBe(403);
    expect((await ask(cast.owner.token, { question, collection_id: crypto.randomUUID() })).status).toBe(404);
    // Someone else's session, or a session that does not exist, is 404.
    const foreign = await ask(cast.memberQuery.token, {
      question,
      collection_id: fx.collectionId,
      session_id: fx.sessions.owner,
    });
    expect(foreign).toMatchObject({ status: 404, json: { code: 'not_found' } });
    expect(
      (await ask(cast.owner.token, { question, collection_id: fx.collectionId, session_id: crypto.randomUUID() })).status,
    ).toBe(404);
    expect((await ask(cast.owner.token, { question: '', collection_id: fx.collectionId })).status).toBe(422);
    expect((await ask(cast.owner.token, { question: 'x'.repeat(5001), collection_id: fx.collectionId })).status).toBe(422);
    expect((await ask(cast.owner.token, { question, collection_id: fx.collectionId, top_k: 0 })).status).toBe(422);
    const unauthenticated = await fetch(`${stack.apiUrl}/query/`, { method: 'POST', body: JSON.stringify({ question }) });
    expect(unauthenticated.status).toBe(401);
  });

  it('answers from the personal namespace when collection_id is empty', async () => {
    const { status, events } = await askQuestion(cast.stranger.token, { question: 'anything', collection_id: '' });
    expect(status).toBe(200);
    expect(events[0]).toMatchObject({ event: 'metadata', data: { sources: [] } });
    expect(events.at(-1)?.event).toBe('done');
  });

  it('a client that disconnects stops generation, and what was produced is recorded', async () => {
    const before = (await evaluationsOf(cast.memberQuery.id)).length;
    const { events } = await askQuestion(
      cast.memberQuery.token,
      { question: 'How do tidal stream generators compare with wind turbines?', collection_id: fx.collectionId, top_k: 3 },
      { stopAfter: (e) => e.event === 'token' },
    );
    expect(events.map((e) => e.event)).toEqual(['metadata', 'token']);
    const after = await eventually(
      () => evaluationsOf(cast.memberQuery.id),
      (rows) => rows.length > before,
    );
    const recorded = after.at(-1);
    expect(recorded?.top_k).toBe(3);
    // Cut short: the record holds a prefix of what a full answer would have been.
    const full = await askQuestion(cast.memberQuery.token, {
      question: 'How do tidal stream generators compare with wind turbines?',
      collection_id: fx.collectionId,
      top_k: 3,
    });
    const fullAnswer = full.events
      .filter((e) => e.event === 'token')
      .map((e) => e.data.token)
      .join('');
    expect(fullAnswer.startsWith(recorded?.answer ?? '')).toBe(true);
    expect((recorded?.answer ?? '').length).toBeLessThan(fullAnswer.length);
  });
});
