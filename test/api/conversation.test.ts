import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../support/client.ts';
import { type Conversation, conversationsOf, pubmedAbstracts } from '../support/conversations.ts';
import { type Cast, castUsers, collectionWithLink } from '../support/fixtures.ts';
import { upload, waitForJob } from '../support/ingest.ts';
import { askQuestion, dataOf, type StreamEvent } from '../support/sse.ts';

// A session's earlier turns shape retrieval: 60 PubMedQA abstracts in one collection, and
// conversations whose follow-ups name nothing of it ("What did they find?", "And what
// about tumor biomarkers?"). A follow-up hits when its abstract is among its five sources.
const abstracts = pubmedAbstracts();
// 40 conversations of two or three turns: 60 follow-ups.
const conversations = conversationsOf(abstracts).slice(0, 40);
const fileOf = (id: string) => `pubmed-${id}.txt`;

let cast: Cast;
let collectionId: string;

async function inBatches<T>(items: readonly T[], size: number, run: (item: T) => Promise<void>) {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(run));
}

beforeAll(async () => {
  cast = await castUsers();
  ({
    collection: { id: collectionId },
  } = await collectionWithLink(cast.owner, 'PubMedQA conversations', 'query'));
  await inBatches(abstracts, 6, async (abstract) => {
    const created = await upload(cast.owner.token, fileOf(abstract.id), abstract.text, collectionId);
    expect(created.status).toBe(200);
    expect((await waitForJob(cast.owner.token, created.body.job_id)).status).toBe('succeeded');
  });
}, 180_000);

/** Each follow-up: did its abstract come back, asked in its session and asked alone? */
async function converse(conversation: Conversation) {
  const file = fileOf(conversation.abstractId);
  const session = await api('POST', `/chat/${collectionId}/sessions`, { token: cast.owner.token, body: {} });
  expect(session.status).toBe(200);
  const outcomes: { withHistory: boolean; alone: boolean }[] = [];
  for (const [i, question] of conversation.turns.entries()) {
    const asked = await askQuestion(cast.owner.token, { question, collection_id: collectionId, session_id: session.body.id });
    expect(asked.events.at(-1)?.event).toBe('done');
    if (i === 0) continue;
    const alone = await api('POST', '/query/search', {
      token: cast.owner.token,
      body: { question, collection_id: collectionId },
    });
    const hit = (sources: { source: string }[]) => sources.some((s) => s.source === file);
    outcomes.push({ withHistory: hit(dataOf(asked.events, 'metadata')?.sources ?? []), alone: hit(alone.body.sources ?? []) });
  }
  return outcomes;
}

describe('follow-ups in a session', () => {
  it('retrieve their abstract far more often with the session’s history than without it', async () => {
    const outcomes: { withHistory: boolean; alone: boolean }[] = [];
    await inBatches(conversations, 4, async (conversation) => {
      outcomes.push(...(await converse(conversation)));
    });
    const rate = (key: 'withHistory' | 'alone') => outcomes.filter((o) => o[key]).length / outcomes.length;
    console.log(
      `conversation follow-ups: ${outcomes.length}; hit rate with history ${rate('withHistory').toFixed(3)}, alone ${rate('alone').toFixed(3)}`,
    );
    expect(outcomes.length).toBe(60);
    expect(rate('withHistory')).toBeGreaterThanOrEqual(0.8);
    expect(rate('withHistory') - rate('alone')).toBeGreaterThanOrEqual(0.4);
  }, 300_000);

  it('leaves the first question of a session exactly as a question without one', async () => {
    const [first] = conversations;
    const session = await api('POST', `/chat/${collectionId}/sessions`, { token: cast.owner.token, body: {} });
    const body = { question: first?.turns[0], collection_id: collectionId };
    const inSession = await askQuestion(cast.owner.token, { ...body, session_id: session.body.id });
    const alone = await askQuestion(cast.owner.token, body);
    const sources = (events: StreamEvent[]) => dataOf(events, 'metadata')?.sources.map((s) => [s.source, s.score]);
    expect(sources(inSession.events)).toEqual(sources(alone.events));
  });
});
