import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_QUERY_COLLECTIONS } from '#core/limits.ts';
import { api, problems, type Schema, type TestUser } from '../support/client.ts';
import { type Cast, castUsers, collectionWithLink, type SharedCollection, sharedCollection } from '../support/fixtures.ts';
import { ingestFile } from '../support/ingest.ts';
import { askQuestion } from '../support/sse.ts';

/**
 * Questions over several collections (`collection_ids`). The handbook is shared with both members;
 * the policies only with the member holding `query`; the stranger's notes are the stranger's alone.
 */
let cast: Cast;
let handbook: SharedCollection;
let policies: string;
let strangers: string;
/** Each collection's document ids, to check which collection a source says it came from. */
const documentsOf = new Map<string, Set<string>>();

const HANDBOOK = `# Handbook

## Tools

Every new starter installs the zephyrine toolkit with the quorvex package manager on the first day.
`;
const POLICIES = `# Policies

## Orchards

The quillworth orchard is pruned every February, and the pruning crew wears blue gloves.
`;
const NOTES = '# Notes\n\nThe stranger keeps a quillworth orchard diary of their own.\n';

beforeAll(async () => {
  cast = await castUsers();
  handbook = await sharedCollection(cast, 'Handbook');
  const created = await collectionWithLink(cast.owner, 'Policies', 'query');
  policies = created.collection.id;
  expect((await api('POST', `/collections/join/${created.link.share_token}`, { token: cast.memberQuery.token })).status).toBe(
    200,
  );
  const theirs = await api('POST', '/collections/', { token: cast.stranger.token, body: { name: 'Notes' } });
  strangers = theirs.body.id;
  const jobs = await Promise.all([
    ingestFile(cast.owner.token, 'handbook.md', handbook.collectionId, HANDBOOK),
    ingestFile(cast.owner.token, 'policies.md', policies, POLICIES),
    ingestFile(cast.stranger.token, 'notes.md', strangers, NOTES),
    ingestFile(cast.owner.token, 'personal.md', undefined, '# Mine\n\nMy own quillworth orchard notes.\n'),
  ]);
  for (const job of jobs) expect(job.status, job.error_message ?? '').toBe('succeeded');
  for (const [collection, user] of [
    [handbook.collectionId, cast.owner],
    [policies, cast.owner],
  ] as const) {
    const listed = await api('GET', `/collections/${collection}/documents`, { token: user.token });
    documentsOf.set(collection, new Set(listed.body.map((d: { id: string }) => d.id)));
  }
}, 120_000);

const search = (who: { token: string } | { apiKey: string }, body: Record<string, unknown>) =>
  api('POST', '/query/search', 'token' in who ? { token: who.token, body } : { headers: { 'X-API-Key': who.apiKey }, body });

const both = () => [handbook.collectionId, policies];

describe('POST /query/search over several collections', () => {
  it('searches every collection, and each source says which one it came from', async () => {
    const response = await search(cast.owner, {
      question: 'zephyrine toolkit and the quillworth orchard',
      collection_ids: both(),
      top_k: 10,
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const { sources } = response.body;
    expect(new Set(sources.map((s) => s.collection_id))).toEqual(new Set(both()));
    for (const source of sources) {
      expect(documentsOf.get(source.collection_id as string)?.has(source.document_id as string), source.text).toBe(true);
    }
    // Nothing from a collection that was not asked for, nor from the personal space.
    expect(sources.some((s) => /stranger|My own/.test(s.text))).toBe(false);
  });

  it('ranks the passages of all the collections on one scale, whatever their order in the request', async () => {
    const question = 'When is the quillworth orchard pruned?';
    const forward = await search(cast.owner, { question, collection_ids: both() });
    const backward = await search(cast.owner, { question, collection_ids: [...both()].reverse() });
    expect(forward.body.sources[0]).toMatchObject({ collection_id: policies, text: expect.stringMatching(/February/) });
    const strip = (sources: Schema<'Source'>[]) =>
      sources.map(({ document_id, collection_id, score }) => [document_id, collection_id, score]);
    expect(strip(backward.body.sources)).toEqual(strip(forward.body.sources));
    // The strongest passage of the other collection does not tie with it, as a fusion per collection would make it.
    const others = forward.body.sources.filter((s) => s.collection_id === handbook.collectionId);
    for (const other of others) expect(other.score).toBeLessThan(forward.body.sources[0]?.score as number);
  });

  it('gives collection_id on one collection’s sources too, and null in the personal space', async () => {
    const one = await search(cast.owner, { question: 'zephyrine toolkit', collection_id: handbook.collectionId });
    expect(one.body.sources.length).toBeGreaterThan(0);
    for (const source of one.body.sources) expect(source.collection_id).toBe(handbook.collectionId);
    const listed = await search(cast.owner, { question: 'zephyrine toolkit', collection_ids: [handbook.collectionId] });
    expect(listed.body.sources).toEqual(one.body.sources);
    const personal = await search(cast.owner, { question: 'quillworth orchard notes' });
    expect(personal.body.sources[0]).toMatchObject({ collection_id: null, text: expect.stringMatching(/My own/) });
  });

  it.each([
    ['both fields', () => ({ collection_id: handbook.collectionId, collection_ids: both() }), 'collection_ids', 'custom'],
    ['an empty list', () => ({ collection_ids: [] }), 'collection_ids', 'too_small'],
    [
      `more than ${MAX_QUERY_COLLECTIONS}`,
      () => ({ collection_ids: Array.from({ length: MAX_QUERY_COLLECTIONS + 1 }, () => randomUUID()) }),
      'collection_ids',
      'too_big',
    ],
    ['a collection twice', () => ({ collection_ids: [policies, policies.toUpperCase()] }), 'collection_ids.1', 'custom'],
    ['an empty id', () => ({ collection_ids: [policies, ''] }), 'collection_ids.1', 'too_small'],
    ['a string', () => ({ collection_ids: policies }), 'collection_ids', 'invalid_type'],
  ])('refuses %s with 422, on both endpoints', async (_name, body, field, type) => {
    for (const path of ['/query/search', '/query/'] as const) {
      const response = await api('POST', path, { token: cast.owner.token, body: { question: 'anything', ...body() } });
      expect(response.status, path).toBe(422);
      const detail = problems(response).find((d) => d.loc.slice(1).join('.') === field);
      expect(detail, JSON.stringify(response.body)).toMatchObject({ type });
    }
  });
});

describe('access over several collections', () => {
  const ask = (user: TestUser, collectionIds: string[]) =>
    askQuestion(user.token, { question: 'quillworth orchard', collection_ids: collectionIds });

  it('gives every kind of caller the status of the collection it may not use', async () => {
    const expected: [keyof Cast, number][] = [
      ['owner', 200],
      ['memberQuery', 200],
      // A member of the handbook but not of the policies.
      ['memberIngest', 403],
      ['stranger', 403],
      ['admin', 403],
    ];
    for (const [role, status] of expected) {
      const searched = await search(cast[role], { question: 'quillworth orchard', collection_ids: both() });
      expect(searched.status, role).toBe(status);
      const asked = await ask(cast[role], both());
      expect(asked.status, role).toBe(status);
      if (status !== 200) expect(searched.body.code, role).toBe('forbidden');
    }
  });

  it('answers for the first refused collection in the order given: 404 for one that does not exist', async () => {
    const missing = randomUUID();
    const statuses = async (user: TestUser, ids: string[]) => [
      (await search(user, { question: 'orchard', collection_ids: ids })).status,
      (await ask(user, ids)).status,
    ];
    expect(await statuses(cast.owner, [handbook.collectionId, missing])).toEqual([404, 404]);
    expect(await statuses(cast.owner, [missing, strangers])).toEqual([404, 404]);
    expect(await statuses(cast.owner, [strangers, missing])).toEqual([403, 403]);
    expect(await statuses(cast.memberIngest, [policies, 'not-a-uuid'])).toEqual([403, 403]);
    expect(await statuses(cast.memberIngest, ['not-a-uuid', policies])).toEqual([404, 404]);
  });

  it('lets a key restricted to one collection reach that one only', async () => {
    const key = async (user: TestUser, collectionId: string | null) => {
      const created = await api('POST', '/keys/', {
        token: user.token,
        body: { name: 'across', scopes: ['query'], collection_id: collectionId },
      });
      expect(created.status).toBe(200);
      return { apiKey: created.body.key as string };
    };
    const restricted = await key(cast.owner, handbook.collectionId);
    const question = 'zephyrine quillworth';
    expect((await search(restricted, { question, collection_ids: [handbook.collectionId] })).status).toBe(200);
    for (const ids of [both(), [...both()].reverse(), [policies]]) {
      const response = await search(restricted, { question, collection_ids: ids });
      expect(response.status, ids.join()).toBe(403);
      expect(response.body.detail).toBe('This API key is restricted to another collection');
      const asked = await api('POST', '/query/', {
        headers: { 'X-API-Key': restricted.apiKey },
        body: { question, collection_ids: ids },
      });
      expect(asked.status).toBe(403);
    }
    const unrestricted = await key(cast.owner, null);
    expect((await search(unrestricted, { question, collection_ids: both() })).status).toBe(200);
    // A member's key reaches no more than the member: the policies are not theirs.
    const membersKey = await key(cast.memberIngest, null);
    expect((await search(membersKey, { question, collection_ids: both() })).status).toBe(403);
  });
});

describe('POST /query/ over several collections', () => {
  /** Asks, reads the stream to its end, and waits until the exchange is in the session. */
  async function askInSession(user: TestUser, sessionId: string, collectionIds: string[], question: string) {
    const asked = await askQuestion(user.token, { question, collection_ids: collectionIds, session_id: sessionId });
    expect(asked.status, JSON.stringify(asked.json)).toBe(200);
    return asked;
  }

  async function messages(user: TestUser, sessionId: string, count: number) {
    for (let tries = 0; tries < 100; tries++) {
      const response = await api('GET', `/chat/${handbook.collectionId}/sessions/${sessionId}`, { token: user.token });
      if (response.body.length >= count) return response.body;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('the exchange was not recorded');
  }

  it('answers from every collection; the metadata’s sources say which', async () => {
    const asked = await askQuestion(cast.memberQuery.token, {
      question: 'What does a new starter install, and when is the orchard pruned?',
      collection_ids: both(),
      top_k: 10,
    });
    expect(asked.status).toBe(200);
    const metadata = asked.events.find((e) => e.event === 'metadata');
    expect(new Set(metadata?.data.sources.map((s: Schema<'Source'>) => s.collection_id))).toEqual(new Set(both()));
    expect(asked.events.at(-1)?.event).toBe('done');
  });

  it('goes on in a session of one of them; the session and its messages say which collections were searched', async () => {
    const session = handbook.sessions.owner;
    await askInSession(cast.owner, session, [policies, handbook.collectionId], 'When is the quillworth orchard pruned?');
    const [question, answer] = await messages(cast.owner, session, 2);
    expect(question?.collection_ids).toEqual([policies, handbook.collectionId]);
    expect(answer?.collection_ids).toEqual([policies, handbook.collectionId]);
    expect(answer?.sources[0]).toMatchObject({ collection_id: policies });

    // A session lives in one collection: it is listed there, with every collection it searched, its own first.
    const listed = await api('GET', `/chat/${handbook.collectionId}/sessions`, { token: cast.owner.token });
    expect(listed.body.find((s) => s.id === session)?.collection_ids).toEqual([handbook.collectionId, policies]);
    expect((await api('GET', `/chat/${policies}/sessions`, { token: cast.owner.token })).body).toEqual([]);

    // A follow-up over the handbook alone keeps the history; the session still says it searched both.
    await askInSession(cast.owner, session, [handbook.collectionId], 'And the zephyrine toolkit?');
    const all = await messages(cast.owner, session, 4);
    expect(all.map((m: { collection_ids: string[] }) => m.collection_ids)).toEqual([
      [policies, handbook.collectionId],
      [policies, handbook.collectionId],
      [handbook.collectionId],
      [handbook.collectionId],
    ]);
  });

  it('refuses a session that lives in none of the asked collections with 404', async () => {
    const asked = await askQuestion(cast.owner.token, {
      question: 'orchard',
      collection_ids: [policies],
      session_id: handbook.sessions.owner,
    });
    expect(asked.status).toBe(404);
    expect(asked.json?.detail).toBe('Session not found');
    // Another participant's session is not theirs, whatever the collections.
    const theirs = await askQuestion(cast.owner.token, {
      question: 'orchard',
      collection_ids: both(),
      session_id: handbook.sessions.memberQuery,
    });
    expect(theirs.status).toBe(404);
  });

  it('shares a session over several collections only with a participant of every one', async () => {
    const created = await api('POST', `/chat/${handbook.collectionId}/sessions`, { token: cast.owner.token });
    const session = created.body.id as string;
    await askInSession(cast.owner, session, both(), 'quillworth orchard gloves');
    await messages(cast.owner, session, 2);
    const share = (target: TestUser) =>
      api('POST', `/chat/${handbook.collectionId}/sessions/${session}/share`, {
        token: cast.owner.token,
        body: { target_user_id: target.id },
      });
    // The member holding `ingest` may use the handbook but not the policies, whose passages the copy would carry.
    const refused = await share(cast.memberIngest);
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toBe('The target user is not the owner or a member of every collection this session searched');
    const shared = await share(cast.memberQuery);
    expect(shared.status).toBe(200);
    const copy = await api('GET', `/chat/${handbook.collectionId}/sessions/${shared.body.new_session_id}`, {
      token: cast.memberQuery.token,
    });
    expect(copy.body.map((m: { collection_ids: string[] }) => m.collection_ids)).toEqual([both(), both()]);
  });

  it('records the evaluation under the first collection, shown only to those who may use every one', async () => {
    const question = `Who wears blue gloves? ${randomUUID()}`;
    const asked = await askQuestion(cast.owner.token, { question, collection_ids: both() });
    expect(asked.status).toBe(200);
    const record = async (user: TestUser | { apiKey: string }, collectionId: string) => {
      const auth = 'apiKey' in user ? { headers: { 'X-API-Key': user.apiKey } } : { token: user.token };
      const listed = await api('GET', `/evals/${collectionId}?limit=200`, auth);
      expect(listed.status).toBe(200);
      return listed.body.find((r: { question: string }) => r.question === question);
    };
    let found: { collection_ids: string[] } | undefined;
    for (let tries = 0; tries < 100 && !found; tries++) {
      found = await record(cast.owner, handbook.collectionId);
      if (!found) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(found?.collection_ids).toEqual(both());
    expect(await record(cast.memberQuery, handbook.collectionId)).toBeDefined();
    // Listed under the first collection only.
    expect(await record(cast.owner, policies)).toBeUndefined();
    // Not to a member of the handbook who may not read the policies, nor through a key restricted to the handbook.
    expect(await record(cast.memberIngest, handbook.collectionId)).toBeUndefined();
    const key = await api('POST', '/keys/', {
      token: cast.owner.token,
      body: { name: 'evals', scopes: ['collections:read'], collection_id: handbook.collectionId },
    });
    expect(await record({ apiKey: key.body.key }, handbook.collectionId)).toBeUndefined();
    const stats = await api('GET', `/evals/${handbook.collectionId}/stats`, { token: cast.memberIngest.token });
    const ownerStats = await api('GET', `/evals/${handbook.collectionId}/stats`, { token: cast.owner.token });
    expect(stats.body.total_queries).toBeLessThan(ownerStats.body.total_queries);
  });
});
