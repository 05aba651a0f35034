import { beforeAll, describe, expect, it } from 'vitest';
import { api, db, signUp, skipRealPostgres, type TestUser } from '../support/client.ts';

let owner: TestUser;

beforeAll(async () => {
  if (skipRealPostgres) return;
  owner = await signUp('owner');
});

async function newCollection(name = 'Shared') {
  const { body } = await api('POST', '/collections/', { token: owner.token, body: { name } });
  return body.id as string;
}

async function share(collectionId: string, permission: 'query' | 'ingest') {
  const response = await api('POST', `/collections/${collectionId}/shares`, { token: owner.token, body: { permission } });
  expect(response.status).toBe(200);
  return response.body as { id: string; share_token: string; permission: string; collection_id: string; created_at: string };
}

describe.skipIf(skipRealPostgres)('invite links', () => {
  it('creates a share row with an unguessable token', async () => {
    const collectionId = await newCollection();
    const created = await share(collectionId, 'ingest');
    expect(created).toEqual({
      id: expect.any(String),
      collection_id: collectionId,
      share_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      permission: 'ingest',
      created_at: expect.any(String),
    });
    // 43 base64url characters carry 256 bits; two links never share a token.
    expect((await share(collectionId, 'ingest')).share_token).not.toBe(created.share_token);
  });

  it('refuses an unknown permission with 422', async () => {
    const collectionId = await newCollection();
    for (const body of [{ permission: 'admin' }, {}, { permission: null }]) {
      const response = await api('POST', `/collections/${collectionId}/shares`, { token: owner.token, body });
      expect(response.status).toBe(422);
    }
    expect(await db()`select 1 from collection_shares where collection_id = ${collectionId}`).toHaveLength(0);
  });

  it('joins, reports already_member and already_owner, and lists members with their email', async () => {
    const collectionId = await newCollection('Join me');
    const link = await share(collectionId, 'query');
    const member = await signUp('joiner');

    const joined = await api('POST', `/collections/join/${link.share_token}`, { token: member.token });
    expect(joined.status).toBe(200);
    expect(joined.body).toEqual({
      collection: expect.objectContaining({ id: collectionId, name: 'Join me', user_id: owner.id }),
      permission: 'query',
    });

    const ingestLink = await share(collectionId, 'ingest');
    const again = await api('POST', `/collections/join/${ingestLink.share_token}/`, { token: member.token });
    expect(again.body).toEqual({ already_member: true, permission: 'query' });
    const byOwner = await api('POST', `/collections/join/${link.share_token}`, { token: owner.token });
    expect(byOwner.body).toEqual({ already_owner: true });

    const listing = await api('GET', `/collections/${collectionId}/shares`, { token: owner.token });
    expect(listing.status).toBe(200);
    expect(listing.body.shares.map((s: { id: string }) => s.id)).toEqual([link.id, ingestLink.id]);
    expect(listing.body.members).toEqual([
      { user_id: member.id, email: member.email, permission: 'query', created_at: expect.any(String) },
    ]);

    const memberView = await api('GET', '/collections/', { token: member.token });
    expect(memberView.body).toEqual([expect.objectContaining({ id: collectionId, shared: true, permission: 'query' })]);
  });

  it('revokes a link: joining with it is 404, existing members stay', async () => {
    const collectionId = await newCollection();
    const link = await share(collectionId, 'query');
    const early = await signUp('early');
    await api('POST', `/collections/join/${link.share_token}`, { token: early.token });

    const revoked = await api('DELETE', `/collections/${collectionId}/shares/${link.id}`, { token: owner.token });
    expect(revoked).toMatchObject({ status: 200, body: { deleted: link.id } });
    const late = await signUp('late');
    const refused = await api('POST', `/collections/join/${link.share_token}`, { token: late.token });
    expect(refused).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect((await api('GET', `/collections/${collectionId}/documents`, { token: early.token })).status).toBe(200);
    expect((await api('DELETE', `/collections/${collectionId}/shares/${link.id}`, { token: owner.token })).status).toBe(404);
  });

  it('answers 404 for an unknown token', async () => {
    const user = await signUp('guesser');
    for (const token of ['nope', 'A'.repeat(43)]) {
      expect((await api('POST', `/collections/join/${token}`, { token: user.token })).status).toBe(404);
    }
  });

  it('removes a member together with their chat sessions in that collection only', async () => {
    const collectionId = await newCollection('Kick');
    const otherCollection = await newCollection('Stay');
    const member = await signUp('kicked');
    await api('POST', `/collections/join/${(await share(collectionId, 'ingest')).share_token}`, { token: member.token });
    await api('POST', `/collections/join/${(await share(otherCollection, 'query')).share_token}`, { token: member.token });
    const { body: session } = await api('POST', `/chat/${collectionId}/sessions`, {
      token: member.token,
      body: { title: 'Mine' },
    });
    await db()`insert into chat_messages (session_id, role, content) values (${session.id}, 'user', 'hi')`;
    const { body: kept } = await api('POST', `/chat/${otherCollection}/sessions`, { token: member.token });
    const { body: ownerSession } = await api('POST', `/chat/${collectionId}/sessions`, { token: owner.token });

    const removed = await api('DELETE', `/collections/${collectionId}/members/${member.id}`, { token: owner.token });
    expect(removed).toMatchObject({ status: 200, body: { removed: member.id } });

    const sessions = await db()`select id from chat_sessions where user_id = ${member.id}`;
    expect(sessions.map((s) => s.id)).toEqual([kept.id]);
    expect(await db()`select 1 from chat_messages where session_id = ${session.id}`).toHaveLength(0);
    expect(await db()`select 1 from chat_sessions where id = ${ownerSession.id}`).toHaveLength(1);
    expect((await api('GET', `/chat/${collectionId}/sessions`, { token: member.token })).status).toBe(403);
    expect((await api('DELETE', `/collections/${collectionId}/members/${member.id}`, { token: owner.token })).status).toBe(404);
    expect((await api('DELETE', `/collections/${collectionId}/members/not-a-uuid`, { token: owner.token })).status).toBe(404);
  });
});
