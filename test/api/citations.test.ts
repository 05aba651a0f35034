import { beforeAll, describe, expect, it } from 'vitest';
import { api, db } from '../support/client.ts';
import { type Cast, castUsers, collectionWithLink } from '../support/fixtures.ts';
import { ingestFile } from '../support/ingest.ts';
import { askQuestion } from '../support/sse.ts';

// The whole path: an answer streamed in a session, scored by the scoring worker through QStash,
// its citations checked and put on both the evaluation record and the chat message.
let cast: Cast;
let collectionId: string;

const NOTES = `The Marrow Island lighthouse was built in 1887 by the engineer Tessa Vaughn.

Its lamp burned whale oil until 1911, when it was converted to kerosene.`;

beforeAll(async () => {
  cast = await castUsers();
  ({
    collection: { id: collectionId },
  } = await collectionWithLink(cast.owner, 'Citations', 'query'));
  expect((await ingestFile(cast.owner.token, 'lighthouse.txt', collectionId, NOTES)).status).toBe('succeeded');
});

async function scored(evaluationId: string) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const list = await api('GET', `/evals/${collectionId}?limit=50`, { token: cast.owner.token });
    const row = list.body.find((e: { id: string }) => e.id === evaluationId);
    if (row?.scorer) return row;
    if (Date.now() > deadline) throw new Error(`evaluation ${evaluationId} not scored: ${JSON.stringify(row)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('checked citations', () => {
  it('checks each [n] of an answer against source n, on the message and the evaluation record', async () => {
    const session = await api('POST', `/chat/${collectionId}/sessions`, { token: cast.owner.token, body: {} });
    const asked = await askQuestion(cast.owner.token, {
      question: 'Who built the Marrow Island lighthouse, and when?',
      collection_id: collectionId,
      session_id: session.body.id,
    });
    const answer = asked.events
      .filter((e) => e.event === 'token')
      .map((e) => e.data.token)
      .join('');
    expect(answer).toMatch(/\[1\]/);

    const [message] = await db()<{ evaluation_id: string }[]>`
      select evaluation_id from chat_messages where session_id = ${session.body.id} and role = 'assistant'`;
    const evaluation = await scored(message?.evaluation_id as string);
    expect(evaluation.citation_support_score).toBe(1);

    const messages = await api('GET', `/chat/${collectionId}/sessions/${session.body.id}`, { token: cast.owner.token });
    expect(messages.body[0]?.citations).toBeNull();
    const citations = messages.body[1]?.citations ?? [];
    expect(citations.length).toBeGreaterThan(0);
    for (const check of citations) {
      expect(check).toEqual({ source: expect.any(Number), sentence: expect.any(String), supported: true });
      expect(answer).toContain(`[${check.source}]`);
    }

    const stats = await api('GET', `/evals/${collectionId}/stats`, { token: cast.owner.token });
    expect(stats.body.avg_citation_support).toBe(1);
    expect(stats.body.trend.at(-1)?.avg_citation_support).toBe(1);
  });
});
