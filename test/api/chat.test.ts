import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, db, problems } from '../support/client.ts';
import { type Cast, castUsers, type SharedCollection, sharedCollection } from '../support/fixtures.ts';

let cast: Cast;
let fx: SharedCollection;

beforeAll(async () => {
  cast = await castUsers();
  fx = await sharedCollection(cast, 'Chats');
});

const sources = [
  { source: 'paper.pdf', chunk_index: 3, text: 'Vitamin D was measured.', score: 0.82, chunk_type: 'text', image_url: null },
  {
    source: 'paper.pdf',
    chunk_index: 7,
    text: 'Figure 2: serum levels',
    score: 0.61,
    chunk_type: 'image_description',
    image_url: 'https://example.com/fig2.png',
  },
];

describe('sessions', () => {
  it('creates a session with no body, an empty body, or a title', async () => {
    const path = `/chat/${fx.collectionId}/sessions` as const;
    const bare = await api('POST', path, { token: cast.memberQuery.token });
    expect(bare).toMatchObject({ status: 200, body: { id: expect.any(String), title: null } });
    expect((await api('POST', path, { token: cast.memberQuery.token, body: {} })).body.title).toBeNull();
    const titled = await api('POST', `${path}/`, { token: cast.memberQuery.token, body: { title: 'Vitamin D' } });
    expect(titled.body).toEqual({
      id: expect.any(String),
      title: 'Vitamin D',
      collection_ids: [fx.collectionId],
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
  });

  it.each([
    [{ title: '' }, 'too_small'],
    [{ title: 'x'.repeat(101) }, 'too_big'],
    [{ title: 7 }, 'invalid_type'],
    [{ title: ' \t ' }, 'too_small'],
    // A NUL was a 500; a title is one line, so every control character is refused.
    [{ title: 'Vitamin\u0000D' }, 'invalid_format'],
    [{ title: 'Two\nlines' }, 'invalid_format'],
  ])('refuses a bad title %j with 422', async (body, type) => {
    for (const [method, path] of [
      ['POST', `/chat/${fx.collectionId}/sessions`],
      ['PATCH', `/chat/${fx.collectionId}/sessions/${fx.sessions.owner}`],
    ] as const) {
      const response = await api(method, path, { token: cast.owner.token, body });
      expect(response.status).toBe(422);
      expect(problems(response)[0]).toMatchObject({ loc: ['body', 'title'], type });
    }
  });

  it('lists only the caller’s sessions, most recently updated first', async () => {
    const fresh = await sharedCollection(cast, 'Listing');
    const path = `/chat/${fresh.collectionId}/sessions` as const;
    const a = await api('POST', path, { token: cast.memberIngest.token, body: { title: 'A' } });
    const b = await api('POST', path, { token: cast.memberIngest.token, body: { title: 'B' } });
    await api('PATCH', `${path}/${a.body.id}`, { token: cast.memberIngest.token, body: { title: 'A renamed' } });
    const listing = await api('GET', path, { token: cast.memberIngest.token });
    expect(listing.body.map((s) => s.title)).toEqual(['A renamed', 'B', `${cast.memberIngest.email}'s chat`]);
    expect(listing.body.map((s) => s.id)).not.toContain(fresh.sessions.owner);
    expect(b.status).toBe(200);
  });

  it('renames and deletes a session; afterwards it is 404', async () => {
    const path = `/chat/${fx.collectionId}/sessions` as const;
    const { body: session } = await api('POST', path, { token: cast.owner.token });
    const renamed = await api('PATCH', `${path}/${session.id}`, { token: cast.owner.token, body: { title: '  Tidy  ' } });
    expect(renamed).toMatchObject({ status: 200, body: { updated: session.id, title: 'Tidy' } });
    const deleted = await api('DELETE', `${path}/${session.id}`, { token: cast.owner.token });
    expect(deleted).toMatchObject({ status: 200, body: { deleted: session.id } });
    expect((await api('GET', `${path}/${session.id}`, { token: cast.owner.token })).status).toBe(404);
    expect((await api('DELETE', `${path}/${session.id}`, { token: cast.owner.token })).status).toBe(404);
    expect((await api('GET', `${path}/${randomUUID()}`, { token: cast.owner.token })).status).toBe(404);
    expect((await api('GET', `${path}/not-a-uuid`, { token: cast.owner.token })).status).toBe(404);
  });

  it('returns messages in order with their sources; fields added since they were recorded are null', async () => {
    const { body: session } = await api('POST', `/chat/${fx.collectionId}/sessions`, { token: cast.owner.token });
    await db()`
      insert into chat_messages (session_id, role, content, sources) values
        (${session.id}, 'user', 'What was measured?', '[]'::jsonb),
        (${session.id}, 'assistant', 'Vitamin D [1].', ${db().json(sources)})`;
    const response = await api('GET', `/chat/${fx.collectionId}/sessions/${session.id}`, { token: cast.owner.token });
    expect(response.status).toBe(200);
    expect(response.body).toEqual([
      {
        id: expect.any(String),
        role: 'user',
        content: 'What was measured?',
        sources: [],
        citations: null,
        collection_ids: [fx.collectionId],
        created_at: expect.any(String),
        evaluation_id: null,
        feedback: null,
      },
      {
        id: expect.any(String),
        role: 'assistant',
        content: 'Vitamin D [1].',
        sources: sources.map((s) => ({
          ...s,
          document_id: null,
          page: null,
          heading: null,
          collection_id: null,
          rerank_score: null,
        })),
        citations: null,
        collection_ids: [fx.collectionId],
        created_at: expect.any(String),
        evaluation_id: null,
        feedback: null,
      },
    ]);
  });
});

describe('members listing', () => {
  it('shows every other participant with email and role, owner first', async () => {
    const response = await api('GET', `/chat/${fx.collectionId}/members`, { token: cast.memberQuery.token });
    expect(response.status).toBe(200);
    expect(response.body).toEqual([
      { user_id: cast.owner.id, email: cast.owner.email, role: 'owner', permission: null },
      { user_id: cast.memberIngest.id, email: cast.memberIngest.email, role: 'member', permission: 'ingest' },
    ]);
    const ownerView = await api('GET', `/chat/${fx.collectionId}/members`, { token: cast.owner.token });
    expect(ownerView.body.map((m: { user_id: string }) => m.user_id)).toEqual([cast.memberQuery.id, cast.memberIngest.id]);
  });
});

describe('session sharing', () => {
  it('copies the session with its messages and sources to the target, who owns the copy', async () => {
    const { body: session } = await api('POST', `/chat/${fx.collectionId}/sessions`, {
      token: cast.memberIngest.token,
      body: { title: 'Worth sharing' },
    });
    await db()`
      insert into chat_messages (session_id, role, content, sources) values
        (${session.id}, 'user', 'Q1', '[]'::jsonb),
        (${session.id}, 'assistant', 'A1 [1][2]', ${db().json(sources)}),
        (${session.id}, 'user', 'Q2', '[]'::jsonb)`;

    const shared = await api('POST', `/chat/${fx.collectionId}/sessions/${session.id}/share`, {
      token: cast.memberIngest.token,
      body: { target_user_id: cast.owner.id },
    });
    expect(shared).toMatchObject({ status: 200, body: { shared: true, new_session_id: expect.any(String) } });
    const copyId = shared.body.new_session_id;
    expect(copyId).not.toBe(session.id);

    const copy = await api('GET', `/chat/${fx.collectionId}/sessions/${copyId}`, { token: cast.owner.token });
    const original = await api('GET', `/chat/${fx.collectionId}/sessions/${session.id}`, { token: cast.memberIngest.token });
    const strip = (messages: { id: string }[]) => messages.map(({ id: _id, ...rest }) => rest);
    expect(strip(copy.body)).toEqual(strip(original.body));
    expect(copy.body.map((m: { content: string }) => m.content)).toEqual(['Q1', 'A1 [1][2]', 'Q2']);
    expect((await api('GET', `/chat/${fx.collectionId}/sessions`, { token: cast.owner.token })).body).toContainEqual(
      expect.objectContaining({ id: copyId, title: 'Worth sharing' }),
    );
    // The copy is the target's: the sharer cannot see it.
    expect((await api('GET', `/chat/${fx.collectionId}/sessions/${copyId}`, { token: cast.memberIngest.token })).status).toBe(
      404,
    );
  });

  it('refuses a target outside the collection with 403, yourself or a non-UUID with 422', async () => {
    const path = `/chat/${fx.collectionId}/sessions/${fx.sessions.owner}/share` as const;
    const before = await db()`select count(*)::int as n from chat_sessions`;
    expect((await api('POST', path, { token: cast.owner.token, body: { target_user_id: cast.stranger.id } })).status).toBe(403);
    expect((await api('POST', path, { token: cast.owner.token, body: { target_user_id: cast.admin.id } })).status).toBe(403);
    expect((await api('POST', path, { token: cast.owner.token, body: { target_user_id: randomUUID() } })).status).toBe(403);
    expect((await api('POST', path, { token: cast.owner.token, body: { target_user_id: cast.owner.id } })).status).toBe(422);
    expect((await api('POST', path, { token: cast.owner.token, body: { target_user_id: 'bob' } })).status).toBe(422);
    expect((await api('POST', path, { token: cast.owner.token, body: {} })).status).toBe(422);
    const owned = await db()`select count(*)::int as n from chat_sessions where user_id = ${cast.stranger.id}`;
    expect(owned[0]?.n).toBe(0);
    expect(before[0]?.n).toBeGreaterThan(0);
  });
});
