import { api, makeAdmin, signUp, type TestUser } from './client.ts';

export interface Cast {
  owner: TestUser;
  memberQuery: TestUser;
  memberIngest: TestUser;
  stranger: TestUser;
  admin: TestUser;
}

/** The five kinds of authenticated caller. The admin is an operator, not a member. */
export async function castUsers(): Promise<Cast> {
  const [owner, memberQuery, memberIngest, stranger, adminUser] = await Promise.all([
    signUp('owner'),
    signUp('member-query'),
    signUp('member-ingest'),
    signUp('stranger'),
    signUp('admin'),
  ]);
  return { owner, memberQuery, memberIngest, stranger, admin: await makeAdmin(adminUser) };
}

/** A collection of `owner`'s with one invite link. */
export async function collectionWithLink(owner: TestUser, name: string, permission: 'query' | 'ingest') {
  const created = await api('POST', '/collections/', { token: owner.token, body: { name } });
  expectOk(created, 'create collection');
  const link = await api('POST', `/collections/${created.body.id}/shares`, { token: owner.token, body: { permission } });
  expectOk(link, 'create share');
  return { collection: created.body, link: link.body };
}

export interface SharedCollection {
  collectionId: string;
  queryShare: { id: string; share_token: string };
  ingestShare: { id: string; share_token: string };
  /** One chat session per participant, keyed by role in the cast. */
  sessions: { owner: string; memberQuery: string; memberIngest: string };
}

/** A collection owned by cast.owner, joined by both members, with a session each. */
export async function sharedCollection(cast: Cast, name = 'Shared'): Promise<SharedCollection> {
  const created = await api('POST', '/collections/', { token: cast.owner.token, body: { name } });
  expectOk(created, 'create collection');
  const collectionId = created.body.id;
  const queryShare = await api('POST', `/collections/${collectionId}/shares`, {
    token: cast.owner.token,
    body: { permission: 'query' },
  });
  const ingestShare = await api('POST', `/collections/${collectionId}/shares`, {
    token: cast.owner.token,
    body: { permission: 'ingest' },
  });
  expectOk(queryShare, 'create share');
  expectOk(ingestShare, 'create share');
  expectOk(await api('POST', `/collections/join/${queryShare.body.share_token}`, { token: cast.memberQuery.token }), 'join');
  expectOk(await api('POST', `/collections/join/${ingestShare.body.share_token}`, { token: cast.memberIngest.token }), 'join');
  const session = async (user: TestUser) => {
    const response = await api('POST', `/chat/${collectionId}/sessions`, {
      token: user.token,
      body: { title: `${user.email}'s chat` },
    });
    expectOk(response, 'create session');
    return response.body.id;
  };
  return {
    collectionId,
    queryShare: queryShare.body,
    ingestShare: ingestShare.body,
    sessions: {
      owner: await session(cast.owner),
      memberQuery: await session(cast.memberQuery),
      memberIngest: await session(cast.memberIngest),
    },
  };
}

/** The cast with a collection shared among them: where a file's tests start. */
export async function castWithCollection(name: string): Promise<SharedCollection & { cast: Cast }> {
  const cast = await castUsers();
  return { cast, ...(await sharedCollection(cast, name)) };
}

function expectOk(response: { status: number; body: unknown }, what: string) {
  if (response.status !== 200) throw new Error(`${what} failed: ${response.status} ${JSON.stringify(response.body)}`);
}
