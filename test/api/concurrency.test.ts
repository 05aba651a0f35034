import { describe, expect, it } from 'vitest';
import { api, db, signUp, skipRealPostgres, stack } from '../support/client.ts';
import { collectionWithLink } from '../support/fixtures.ts';

// Runs against PGlite and, in the `postgres` project, against the real PostgreSQL,
// where requests really do run in parallel.
describe.skipIf(skipRealPostgres)(`concurrency (${stack.engine})`, () => {
  it('two joins of the same link at the same time give one membership', async () => {
    const owner = await signUp('owner');
    const joiner = await signUp('joiner');
    const { collection, link } = await collectionWithLink(owner, 'Race', 'ingest');

    const responses = await Promise.all(
      Array.from({ length: 8 }, () => api('POST', `/collections/join/${link.share_token}`, { token: joiner.token })),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(responses.filter((r) => 'collection' in r.body)).toHaveLength(1);
    expect(responses.filter((r) => 'already_member' in r.body && r.body.already_member === true)).toHaveLength(7);
    const rows = await db()`select * from collection_members where collection_id = ${collection.id}`;
    expect(rows).toHaveLength(1);
  });

  it('joins racing for the last uses of a link: exactly max_uses get in', async () => {
    const owner = await signUp('owner');
    const { collection } = await collectionWithLink(owner, 'Limited', 'query');
    const link = await api('POST', `/collections/${collection.id}/shares`, {
      token: owner.token,
      body: { permission: 'query', max_uses: 3 },
    });
    const joiners = await Promise.all(Array.from({ length: 10 }, (_, i) => signUp(`racer${i}`)));

    const responses = await Promise.all(
      joiners.map((user) => api('POST', `/collections/join/${link.body.share_token}`, { token: user.token })),
    );
    expect(responses.filter((r) => r.status === 200 && 'collection' in r.body)).toHaveLength(3);
    for (const refused of responses.filter((r) => r.status !== 200)) {
      expect(refused).toMatchObject({ status: 404, body: { code: 'not_found' } });
    }
    const [counts] = await db()`
      select (select uses from collection_shares where id = ${link.body.id}) as uses,
             (select count(*) from collection_members where collection_id = ${collection.id})::int as members`;
    expect(counts).toEqual({ uses: 3, members: 3 });
  });

  it('one user joining a single-use link many times at once uses it once', async () => {
    const owner = await signUp('owner');
    const joiner = await signUp('joiner');
    const other = await signUp('other');
    const { collection } = await collectionWithLink(owner, 'Single use', 'ingest');
    const link = await api('POST', `/collections/${collection.id}/shares`, {
      token: owner.token,
      body: { permission: 'ingest', max_uses: 1 },
    });

    const responses = await Promise.all(
      Array.from({ length: 8 }, () => api('POST', `/collections/join/${link.body.share_token}`, { token: joiner.token })),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(responses.filter((r) => 'collection' in r.body)).toHaveLength(1);
    const [row] = await db()`select uses from collection_shares where id = ${link.body.id}`;
    expect(row?.uses).toBe(1);
    expect((await api('POST', `/collections/join/${link.body.share_token}`, { token: other.token })).status).toBe(404);
  });

  it('a removal racing rejoins through the old link leaves the member out', async () => {
    const owner = await signUp('owner');
    const member = await signUp('member');
    const { collection, link } = await collectionWithLink(owner, 'Kick and rejoin race', 'query');
    await api('POST', `/collections/join/${link.share_token}`, { token: member.token });

    const rejoins = Array.from({ length: 6 }, () =>
      api('POST', `/collections/join/${link.share_token}`, { token: member.token }),
    );
    const removal = api('DELETE', `/collections/${collection.id}/members/${member.id}`, { token: owner.token });
    const responses = await Promise.all([removal, ...rejoins]);
    expect(responses[0]?.status).toBe(200);
    // Each rejoin ran before the removal (already a member) or after it (refused).
    for (const response of responses.slice(1)) {
      if (response.status === 200) expect(response.body).toEqual({ already_member: true, permission: 'query' });
      else expect(response.status).toBe(403);
    }
    const rows = await db()`select 1 from collection_members where collection_id = ${collection.id} and user_id = ${member.id}`;
    expect(rows).toHaveLength(0);
    expect((await api('POST', `/collections/join/${link.share_token}`, { token: member.token })).status).toBe(403);
  });

  it('deleting a shared collection while members use it leaves no orphan rows and no 500s', async () => {
    const owner = await signUp('owner');
    const members = await Promise.all([signUp('m1'), signUp('m2'), signUp('m3')]);
    const { collection, link } = await collectionWithLink(owner, 'Busy', 'query');
    for (const member of members) await api('POST', `/collections/join/${link.share_token}`, { token: member.token });
    const latecomers = await Promise.all([signUp('late1'), signUp('late2')]);

    const traffic = [
      ...members.flatMap((member) => [
        api('POST', `/chat/${collection.id}/sessions`, { token: member.token, body: { title: 'busy' } }),
        api('POST', `/chat/${collection.id}/sessions`, { token: member.token }),
        api('GET', `/chat/${collection.id}/sessions`, { token: member.token }),
        api('GET', `/chat/${collection.id}/members`, { token: member.token }),
        api('GET', `/collections/${collection.id}/documents`, { token: member.token }),
      ]),
      ...latecomers.map((user) => api('POST', `/collections/join/${link.share_token}`, { token: user.token })),
      api('POST', `/collections/${collection.id}/shares`, { token: owner.token, body: { permission: 'ingest' } }),
      api('DELETE', `/collections/${collection.id}`, { token: owner.token }),
      ...members.map((member) =>
        api('POST', `/chat/${collection.id}/sessions`, { token: member.token, body: { title: 'after' } }),
      ),
    ];
    const responses = await Promise.all(traffic);
    for (const response of responses) expect([200, 403, 404], JSON.stringify(response.body)).toContain(response.status);

    const [orphans] = await db()`
      select (select count(*) from collection_shares s where not exists (select 1 from collections c where c.id = s.collection_id))::int as shares,
             (select count(*) from collection_members m where not exists (select 1 from collections c where c.id = m.collection_id))::int as members,
             (select count(*) from chat_sessions s where not exists (select 1 from collections c where c.id = s.collection_id))::int as sessions,
             (select count(*) from chat_messages m where not exists (select 1 from chat_sessions s where s.id = m.session_id))::int as messages,
             (select count(*) from chat_sessions where collection_id = ${collection.id})::int as left_behind`;
    expect(orphans).toEqual({ shares: 0, members: 0, sessions: 0, messages: 0, left_behind: 0 });
    expect((await api('GET', `/chat/${collection.id}/sessions`, { token: members[0]!.token })).status).toBe(404);
  });

  it('removing a member while they open sessions leaves them none', async () => {
    const owner = await signUp('owner');
    const member = await signUp('member');
    const { collection, link } = await collectionWithLink(owner, 'Kick race', 'query');
    await api('POST', `/collections/join/${link.share_token}`, { token: member.token });

    const opens = Array.from({ length: 6 }, () => api('POST', `/chat/${collection.id}/sessions`, { token: member.token }));
    const removal = api('DELETE', `/collections/${collection.id}/members/${member.id}`, { token: owner.token });
    const responses = await Promise.all([...opens, removal]);
    for (const response of responses) expect([200, 403]).toContain(response.status);
    const sessions = await db()`select id from chat_sessions where collection_id = ${collection.id} and user_id = ${member.id}`;
    expect(sessions).toHaveLength(0);
  });
});
