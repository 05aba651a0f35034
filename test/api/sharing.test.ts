import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, db, problems, signUp, skipRealPostgres, type TestUser } from '../support/client.ts';

let owner: TestUser;

beforeAll(async () => {
  if (skipRealPostgres) return;
  owner = await signUp('owner');
});

async function newCollection(name = 'Shared') {
  const { body } = await api('POST', '/collections/', { token: owner.token, body: { name } });
  return body.id as string;
}

interface CreatedShare {
  id: string;
  share_token: string;
  token_prefix: string;
  permission: string;
  collection_id: string;
  created_at: string;
  expires_at: string | null;
  max_uses: number | null;
  uses: number;
}

async function share(
  collectionId: string,
  permission: 'query' | 'ingest',
  options: { expires_at?: string; max_uses?: number } = {},
): Promise<CreatedShare> {
  const response = await api('POST', `/collections/${collectionId}/shares`, {
    token: owner.token,
    body: { permission, ...options },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
}

const join = (token: string, user: TestUser) => api('POST', `/collections/join/${token}`, { token: user.token });
const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

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
      // Added by issue 9: additive fields.
      token_prefix: created.share_token.slice(0, 6),
      expires_at: null,
      max_uses: null,
      uses: 0,
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
    // Issue 9: only a hash is stored, so the listing cannot show the token any more.
    expect(listing.body.shares[0]).toEqual({ ...link, share_token: null, uses: 1 });
    expect(listing.body.shares[1]).toEqual({ ...ingestLink, share_token: null });
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

describe.skipIf(skipRealPostgres)('removed means removed (issue 9)', () => {
  it('refuses a removed member every link made before the removal, and admits them through a new one', async () => {
    const collectionId = await newCollection('Kick and return');
    const link = await share(collectionId, 'ingest');
    const otherOldLink = await share(collectionId, 'query');
    const member = await signUp('returner');
    expect((await join(link.share_token, member)).status).toBe(200);

    await api('DELETE', `/collections/${collectionId}/members/${member.id}`, { token: owner.token });
    expect((await api('GET', `/collections/${collectionId}/documents`, { token: member.token })).status).toBe(403);

    // Before issue 9 this answered 200 and gave full access again.
    for (const old of [link, otherOldLink]) {
      const refused = await join(old.share_token, member);
      expect(refused).toMatchObject({ status: 403, body: { code: 'forbidden' } });
      expect(refused.body.detail).toMatch(/removed.*ask the owner for a new link/i);
    }
    expect((await api('GET', `/collections/${collectionId}/documents`, { token: member.token })).status).toBe(403);
    expect(
      await db()`select 1 from collection_members where collection_id = ${collectionId} and user_id = ${member.id}`,
    ).toHaveLength(0);
    // A refused join uses nothing up.
    expect((await db()`select uses from collection_shares where id = ${link.id}`)[0]?.uses).toBe(1);

    // Other users still join through the old links.
    expect((await join(link.share_token, await signUp('newcomer'))).status).toBe(200);

    const fresh = await share(collectionId, 'query');
    const rejoined = await join(fresh.share_token, member);
    expect(rejoined.body).toEqual({ collection: expect.objectContaining({ id: collectionId }), permission: 'query' });
    expect((await api('GET', `/collections/${collectionId}/documents`, { token: member.token })).status).toBe(200);
    // Back in, an old link only reports the membership.
    expect((await join(link.share_token, member)).body).toEqual({ already_member: true, permission: 'query' });

    // A second removal shuts the new link too.
    await api('DELETE', `/collections/${collectionId}/members/${member.id}`, { token: owner.token });
    expect((await join(fresh.share_token, member)).status).toBe(403);
  });

  it('keeps a removal to its collection', async () => {
    const kicked = await newCollection('Kicked from');
    const other = await newCollection('Still welcome');
    const member = await signUp('partial');
    await join((await share(kicked, 'query')).share_token, member);
    const otherLink = await share(other, 'query');
    await api('DELETE', `/collections/${kicked}/members/${member.id}`, { token: owner.token });
    expect((await join(otherLink.share_token, member)).status).toBe(200);
  });
});

describe.skipIf(skipRealPostgres)('hashed tokens, expiry and maximum uses (issue 9)', () => {
  it('stores only the token’s SHA-256 and its first characters', async () => {
    const collectionId = await newCollection();
    const created = await share(collectionId, 'query');
    const [row] = await db()`select * from collection_shares where id = ${created.id}`;
    expect(row?.token_hash).toBe(sha256Hex(created.share_token));
    expect(row?.token_prefix).toBe(created.share_token.slice(0, 6));
    expect(Object.values(row ?? {}).map(String)).not.toContain(created.share_token);
    expect(row).not.toHaveProperty('share_token');
    // The migration hashed the existing tokens with this SQL; it must agree with the API's hash.
    const [sql] = await db()`select encode(sha256(convert_to(${created.share_token}, 'UTF8')), 'hex') as hash`;
    expect(sql?.hash).toBe(row?.token_hash);
  });

  it('lists links without their tokens but with a prefix and their limits', async () => {
    const collectionId = await newCollection();
    const expires_at = new Date(Date.now() + 86_400_000).toISOString();
    const created = await share(collectionId, 'ingest', { expires_at, max_uses: 5 });
    expect(created).toMatchObject({ expires_at, max_uses: 5, uses: 0, share_token: expect.any(String) });
    const listing = await api('GET', `/collections/${collectionId}/shares`, { token: owner.token });
    expect(listing.body.shares).toEqual([{ ...created, share_token: null }]);
  });

  it('refuses bad expiry and maximum-use values with 422', async () => {
    const collectionId = await newCollection();
    const past = new Date(Date.now() - 1000).toISOString();
    for (const extra of [
      { expires_at: past },
      { expires_at: 'tomorrow' },
      { expires_at: 12 },
      { max_uses: 0 },
      { max_uses: -1 },
      { max_uses: 1.5 },
      { max_uses: '3' },
      { max_uses: 1_000_001 },
    ]) {
      const response = await api('POST', `/collections/${collectionId}/shares`, {
        token: owner.token,
        body: { permission: 'query', ...extra },
      });
      expect(response.status, JSON.stringify(extra)).toBe(422);
      expect(problems(response)[0]?.loc, JSON.stringify(extra)).toEqual(['body', Object.keys(extra)[0]]);
    }
    expect(await db()`select 1 from collection_shares where collection_id = ${collectionId}`).toHaveLength(0);
    // An offset is accepted, and null means no limit.
    const withOffset = await share(collectionId, 'query', { expires_at: '2999-01-01T00:00:00+02:00' });
    expect(withOffset.expires_at).toBe('2998-12-31T22:00:00.000Z');
    const unlimited = await api('POST', `/collections/${collectionId}/shares`, {
      token: owner.token,
      body: { permission: 'query', expires_at: null, max_uses: null },
    });
    expect(unlimited.body).toMatchObject({ expires_at: null, max_uses: null });
  });

  it('answers 404 "Share link expired" once a link has expired; members stay', async () => {
    const collectionId = await newCollection();
    const link = await share(collectionId, 'query', { expires_at: new Date(Date.now() + 60_000).toISOString() });
    const early = await signUp('early');
    expect((await join(link.share_token, early)).status).toBe(200);
    await db()`update collection_shares set expires_at = now() - interval '1 second' where id = ${link.id}`;

    const late = await signUp('late');
    const refused = await join(link.share_token, late);
    expect(refused).toMatchObject({ status: 404, body: { code: 'not_found', detail: 'Share link expired' } });
    expect((await join(link.share_token, early)).body).toEqual({ already_member: true, permission: 'query' });
    expect((await join(link.share_token, owner)).body).toEqual({ already_owner: true });
    expect((await api('GET', `/collections/${collectionId}/documents`, { token: early.token })).status).toBe(200);
  });

  it('admits max_uses users and then answers 404; owners and members use nothing up', async () => {
    const collectionId = await newCollection();
    const link = await share(collectionId, 'query', { max_uses: 2 });
    const [first, second, third] = await Promise.all([signUp('first'), signUp('second'), signUp('third')]);

    expect((await join(link.share_token, first)).status).toBe(200);
    expect((await join(link.share_token, first)).body).toEqual({ already_member: true, permission: 'query' });
    expect((await join(link.share_token, owner)).body).toEqual({ already_owner: true });
    expect((await join(link.share_token, second)).status).toBe(200);
    const refused = await join(link.share_token, third);
    expect(refused).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(refused.body.detail).toMatch(/maximum number of uses/);

    const listing = await api('GET', `/collections/${collectionId}/shares`, { token: owner.token });
    expect(listing.body.shares).toEqual([expect.objectContaining({ id: link.id, max_uses: 2, uses: 2 })]);
    expect(listing.body.members.map((m: { user_id: string }) => m.user_id).sort()).toEqual([first.id, second.id].sort());
  });
});
