import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, db } from '../support/client.ts';
import { type Cast, castUsers, type SharedCollection, sharedCollection } from '../support/fixtures.ts';
import { ingestFile } from '../support/ingest.ts';
import { askQuestion, dataOf } from '../support/sse.ts';

// Thumbs up or down on an answer (issue 23), through the real API worker: the stream names the answer's record
// once it is written, its asker rates it, every participant sees the rating, and the stats count it and put the
// answers rated down first among the worst.
let cast: Cast;
let fx: SharedCollection;

const NOTES = `# Orchard notes

The orchard is pruned every February, before the buds open. Pears are picked in September.
`;

const rate = (token: string, evaluationId: string, body: unknown) =>
  api('PUT', `/query/answers/${evaluationId}/feedback`, { token, body });

beforeAll(async () => {
  cast = await castUsers();
  fx = await sharedCollection(cast, 'Feedback');
  const job = await ingestFile(cast.owner.token, 'orchard.md', fx.collectionId, NOTES);
  expect(job.status, job.error_message ?? '').toBe('succeeded');
}, 120_000);

async function ask(token: string, sessionId?: string) {
  const body = { question: 'When is the orchard pruned?', collection_id: fx.collectionId, session_id: sessionId };
  const { status, events } = await askQuestion(token, body);
  expect(status).toBe(200);
  expect(events.at(-1)?.event).toBe('done');
  return dataOf(events, 'done')?.evaluation_id as string;
}

describe('PUT /query/answers/{evaluation_id}/feedback', () => {
  it('rates the answer the stream named, at once, and every participant sees it on the record', async () => {
    const evaluationId = await ask(cast.memberQuery.token);
    expect(evaluationId).toMatch(/^[0-9a-f-]{36}$/);
    // No wait: the record is written before `done` is sent.
    const rated = await rate(cast.memberQuery.token, evaluationId, { feedback: 'down', comment: 'It skipped the pears.' });
    expect(rated.status).toBe(200);
    expect(rated.body).toEqual({
      evaluation_id: evaluationId,
      feedback: 'down',
      comment: 'It skipped the pears.',
      rated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const listed = await api('GET', `/evals/${fx.collectionId}?limit=200`, { token: cast.owner.token });
    expect(listed.body.find((r: { id: string }) => r.id === evaluationId)).toMatchObject({
      feedback: 'down',
      feedback_comment: 'It skipped the pears.',
    });
  });

  it('replaces a rating, and takes it back with its comment', async () => {
    const evaluationId = await ask(cast.memberQuery.token);
    await rate(cast.memberQuery.token, evaluationId, { feedback: 'down', comment: 'Wrong month' });
    const up = await rate(cast.memberQuery.token, evaluationId, { feedback: 'up' });
    expect(up.body).toMatchObject({ feedback: 'up', comment: null });
    const back = await rate(cast.memberQuery.token, evaluationId, { feedback: null, comment: 'ignored' });
    expect(back.body).toEqual({ evaluation_id: evaluationId, feedback: null, comment: null, rated_at: null });
    const [row] = await db()`select feedback, feedback_comment, feedback_at from evaluations where id = ${evaluationId}`;
    expect(row).toEqual({ feedback: null, feedback_comment: null, feedback_at: null });
  });

  it('is 404 to everyone but the asker, whatever their part in the collection, and changes nothing', async () => {
    const evaluationId = await ask(cast.memberQuery.token);
    for (const user of [cast.owner, cast.memberIngest, cast.admin, cast.stranger]) {
      const refused = await rate(user.token, evaluationId, { feedback: 'up' });
      expect(refused.status, user.email).toBe(404);
      expect(refused.body.code).toBe('not_found');
    }
    for (const missing of [randomUUID(), 'not-a-uuid']) {
      expect((await rate(cast.memberQuery.token, missing, { feedback: 'up' })).status).toBe(404);
    }
    const [row] = await db()`select feedback from evaluations where id = ${evaluationId}`;
    expect(row?.feedback).toBeNull();
  });

  it('refuses a bad rating or comment with 422, naming the field', async () => {
    const evaluationId = await ask(cast.memberQuery.token);
    for (const [body, field] of [
      [{ feedback: 'meh' }, 'feedback'],
      [{}, 'feedback'],
      [{ feedback: 'up', comment: 'x'.repeat(2001) }, 'comment'],
      [{ feedback: 'up', comment: '   ' }, 'comment'],
      [{ feedback: 'up', comment: 'bell\u0007' }, 'comment'],
      [{ feedback: 'up', score: 5 }, 'score'],
    ] as const) {
      const refused = await rate(cast.memberQuery.token, evaluationId, body);
      expect(refused.status, JSON.stringify(body)).toBe(422);
      expect(JSON.stringify(refused.body.detail), JSON.stringify(body)).toContain(field);
    }
    // A comment may run over several lines.
    const multiline = await rate(cast.memberQuery.token, evaluationId, { feedback: 'down', comment: 'First.\nSecond.' });
    expect(multiline.body.comment).toBe('First.\nSecond.');
  });

  it('shows each answer’s record and rating in its chat session', async () => {
    const session = await api('POST', `/chat/${fx.collectionId}/sessions`, { token: cast.memberQuery.token, body: {} });
    const evaluationId = await ask(cast.memberQuery.token, session.body.id);
    await rate(cast.memberQuery.token, evaluationId, { feedback: 'up' });
    const messages = await api('GET', `/chat/${fx.collectionId}/sessions/${session.body.id}`, { token: cast.memberQuery.token });
    expect(messages.body.map((m: { role: string; evaluation_id: string | null; feedback: string | null }) => m)).toMatchObject([
      { role: 'user', evaluation_id: null, feedback: null },
      { role: 'assistant', evaluation_id: evaluationId, feedback: 'up' },
    ]);
  });
});

describe('the stats with ratings', () => {
  it('count ups and downs, and put the answers rated down first among the worst', async () => {
    const own = await castUsers();
    const { collectionId } = await sharedCollection(own, 'Rated');
    // Scored records as the scoring worker leaves them: one good answer, two poor ones.
    const rows = [
      { question: 'Good but rated down', scores: [0.95, 0.9] },
      { question: 'Poor', scores: [0.2, 0.3] },
      { question: 'Poorer', scores: [0.1, 0.2] },
      { question: 'Fine and rated up', scores: [0.8, 0.8] },
    ].map(({ question, scores }, i) => ({
      id: randomUUID(),
      collection_id: collectionId,
      user_id: own.memberQuery.id,
      question,
      answer: 'An answer [1].',
      faithfulness_score: scores[0],
      context_relevance_score: scores[1],
      total_latency_ms: 1000,
      embedding_latency_ms: 10,
      retrieval_latency_ms: 20,
      generation_latency_ms: 900,
      time_to_first_token_ms: 100,
      engine: 'devstack:extractive',
      retrieval_strategy: 'similarity',
      top_k: 5,
      scorer: 'lexical',
      created_at: new Date(Date.UTC(2026, 10, 20, 12, i)).toISOString(),
    }));
    await db()`insert into evaluations ${db()(rows as unknown as Record<string, unknown>[])}`;
    const [good, , , fine] = rows as [(typeof rows)[0], unknown, unknown, (typeof rows)[0]];
    expect((await rate(own.memberQuery.token, good.id, { feedback: 'down', comment: 'Not what I asked' })).status).toBe(200);
    expect((await rate(own.memberQuery.token, fine.id, { feedback: 'up' })).status).toBe(200);

    const stats = await api('GET', `/evals/${collectionId}/stats`, { token: own.owner.token });
    expect(stats.status).toBe(200);
    expect(stats.body).toMatchObject({ total_queries: 4, feedback_up: 1, feedback_down: 1 });
    expect(stats.body.worst_queries.map((w: { question: string }) => w.question)).toEqual([
      'Good but rated down',
      'Poorer',
      'Poor',
      'Fine and rated up',
    ]);
    expect(stats.body.worst_queries[0]).toMatchObject({ feedback: 'down', feedback_comment: 'Not what I asked' });
    expect(stats.body.worst_queries[3]).toMatchObject({ feedback: 'up', feedback_comment: null });
  });
});
