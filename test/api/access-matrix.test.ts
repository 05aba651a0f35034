import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, mintToken, signUp, snapshot, stack, type TestUser } from '../support/client.ts';
import { type Cast, castUsers, type SharedCollection, sharedCollection } from '../support/fixtures.ts';

/**
 * The cast, an outsider whose token says `is_admin: "false"` (a string is no admin grant), and a
 * member who joined through the ingest link and was then removed: that link no longer admits them.
 */
type Callers = Cast & { falseAdmin: TestUser; removed: TestUser };
type Role = keyof Callers;
const ROLES: Role[] = ['stranger', 'falseAdmin', 'removed', 'admin', 'memberQuery', 'memberIngest', 'owner'];

interface Endpoint {
  name: string;
  method: string;
  path: string;
  body?: Record<string, unknown>;
  /** Expected status for each authenticated caller; 200s run last, the owner's very last. */
  expect: Record<Role, number>;
}

/** Callers with no part in the collection. */
const outsiders = { stranger: 403, falseAdmin: 403, removed: 403 };
const ownerOnly = { ...outsiders, admin: 403, memberQuery: 403, memberIngest: 403, owner: 200 };
const participants = { ...outsiders, admin: 403, memberQuery: 200, memberIngest: 200, owner: 200 };
const adminOnly = { ...outsiders, admin: 200, memberQuery: 403, memberIngest: 403, owner: 403 };
const everyone = { stranger: 200, falseAdmin: 200, removed: 200, admin: 200, memberQuery: 200, memberIngest: 200, owner: 200 };
const ingesters = { ...outsiders, admin: 403, memberQuery: 403, memberIngest: 200, owner: 200 };
// A link made before a member's removal does not admit them again.
const joiners = { ...everyone, removed: 403 };
// Another user's session is 404 to members; the collection itself is 403 to outsiders.
const sessionOwner = { ...outsiders, admin: 403, memberQuery: 404, memberIngest: 404, owner: 200 };

/** `route` is the method and the path; the path, and the string values of the body, may name parts of the fixture. */
function endpoint(name: string, route: string, expect: Record<Role, number>, body?: Record<string, unknown>): Endpoint {
  const [method, path] = route.split(' ') as [string, string];
  return { name, method, path, body, expect };
}

const question = { question: 'anything at all', collection_id: '{collection}' };
const ENDPOINTS: Endpoint[] = [
  endpoint('create collection', 'POST /collections/', everyone, { name: 'Mine' }),
  endpoint('list collections', 'GET /collections/', everyone),
  endpoint('delete collection', 'DELETE /collections/{collection}', ownerOnly),
  endpoint('get config', 'GET /collections/{collection}/config', adminOnly),
  endpoint('put config', 'PUT /collections/{collection}/config', adminOnly, { chunk_size: 500, retrieval_strategy: 'mmr' }),
  endpoint('rechunk', 'POST /collections/{collection}/rechunk', adminOnly),
  endpoint('list documents', 'GET /collections/{collection}/documents', participants),
  endpoint('ingest url', 'POST /ingest/url', ingesters, { url: '{pages}/article.html', collection_id: '{collection}' }),
  endpoint('search', 'POST /query/search', participants, question),
  endpoint('ask', 'POST /query/', participants, question),
  endpoint('list evaluations', 'GET /evals/{collection}', participants),
  endpoint('evaluation stats', 'GET /evals/{collection}/stats', participants),
  endpoint('create share', 'POST /collections/{collection}/shares', ownerOnly, { permission: 'query' }),
  endpoint('list shares', 'GET /collections/{collection}/shares', ownerOnly),
  endpoint('revoke share', 'DELETE /collections/{collection}/shares/{queryShare}', ownerOnly),
  endpoint('remove member', 'DELETE /collections/{collection}/members/{memberQuery}', ownerOnly),
  endpoint('join', 'POST /collections/join/{ingestShareToken}', joiners),
  endpoint('create session', 'POST /chat/{collection}/sessions', participants, { title: 'New' }),
  endpoint('list sessions', 'GET /chat/{collection}/sessions', participants),
  endpoint('read session', 'GET /chat/{collection}/sessions/{ownerSession}', sessionOwner),
  endpoint('rename session', 'PATCH /chat/{collection}/sessions/{ownerSession}', sessionOwner, { title: 'Renamed' }),
  endpoint('delete session', 'DELETE /chat/{collection}/sessions/{ownerSession}', sessionOwner),
  endpoint('chat members', 'GET /chat/{collection}/members', participants),
  endpoint('share session', 'POST /chat/{collection}/sessions/{ownerSession}/share', sessionOwner, {
    target_user_id: '{memberQuery}',
  }),
];

/** An endpoint's path and body with every {name} replaced by what it stands for in this fixture. */
function request({ path, body }: Endpoint, fx: SharedCollection, cast: Callers) {
  const values: Record<string, string> = {
    collection: fx.collectionId,
    queryShare: fx.queryShare.id,
    ingestShareToken: fx.ingestShare.share_token,
    ownerSession: fx.sessions.owner,
    memberQuery: cast.memberQuery.id,
    pages: stack.pagesUrl,
  };
  const fill = (template: string) => template.replace(/\{(\w+)\}/g, (_, name: string) => values[name] as string);
  return {
    path: fill(path),
    body:
      body &&
      Object.fromEntries(Object.entries(body).map(([key, value]) => [key, typeof value === 'string' ? fill(value) : value])),
  };
}

// Every endpoint but 'create collection', 'list collections' and 'join' names a collection.
const COLLECTION_SCOPED = new Set(ENDPOINTS.filter((e) => JSON.stringify(e).includes('{collection}')));

let cast: Callers;
const badTokens: { name: string; header: (cast: Callers) => Promise<string | undefined>; detail: string }[] = [
  { name: 'no token', header: async () => undefined, detail: 'Not authenticated' },
  { name: 'malformed header', header: async (c) => `Token ${c.owner.token}`, detail: 'Not authenticated' },
  { name: 'empty bearer', header: async () => 'Bearer ', detail: 'Not authenticated' },
  {
    name: 'expired',
    header: async (c) => `Bearer ${await mintToken({ sub: c.owner.id }, { expiresIn: Math.floor(Date.now() / 1000) - 120 })}`,
    detail: 'Token expired',
  },
  {
    name: 'bad signature',
    header: async (c) => {
      const { privateKey } = await generateKeyPair('ES256');
      return `Bearer ${await mintToken({ sub: c.owner.id }, { key: privateKey })}`;
    },
    detail: 'Invalid token',
  },
  {
    name: 'tampered payload',
    header: async (c) => {
      const [h, , s] = c.memberQuery.token.split('.');
      const forged = Buffer.from(JSON.stringify({ sub: c.owner.id, aud: 'authenticated', exp: 4102444800 })).toString(
        'base64url',
      );
      return `Bearer ${h}.${forged}.${s}`;
    },
    detail: 'Invalid token',
  },
  {
    name: 'wrong audience',
    header: async (c) => `Bearer ${await mintToken({ sub: c.owner.id, aud: 'anon' })}`,
    detail: 'Invalid token',
  },
  {
    name: 'alg none',
    header: async (c) => {
      const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const now = Math.floor(Date.now() / 1000);
      return `Bearer ${part({ alg: 'none', typ: 'JWT' })}.${part({ sub: c.owner.id, aud: 'authenticated', iat: now, exp: now + 600 })}.`;
    },
    detail: 'Invalid token',
  },
  {
    name: 'HS256 signed with the public key',
    header: async (c) => {
      const { d: _d, ...publicJwk } = JSON.parse(stack.privateJwk);
      const secret = new TextEncoder().encode(JSON.stringify(publicJwk));
      return `Bearer ${await mintToken({ sub: c.owner.id }, { key: secret, alg: 'HS256' })}`;
    },
    detail: 'Invalid token',
  },
  {
    name: 'unknown kid',
    header: async (c) => {
      const { privateKey } = await generateKeyPair('ES256', { extractable: true });
      await exportJWK(privateKey);
      return `Bearer ${await mintToken({ sub: c.owner.id }, { key: privateKey, kid: 'rotated-away' })}`;
    },
    detail: 'Invalid token',
  },
  {
    name: 'jku header pointing elsewhere',
    header: async (c) => `Bearer ${await mintToken({ sub: c.owner.id }, { header: { jku: 'http://127.0.0.1:1/evil.json' } })}`,
    detail: 'Invalid token',
  },
];

beforeAll(async () => {
  const [users, falseAdmin, removed] = await Promise.all([castUsers(), signUp('false-admin'), signUp('removed')]);
  const token = await mintToken({ sub: falseAdmin.id, email: falseAdmin.email, app_metadata: { is_admin: 'false' } });
  cast = { ...users, falseAdmin: { ...falseAdmin, token }, removed };
});

/** The shared collection, which `removed` joined through its ingest link and then left, removed by the owner. */
async function fixture(): Promise<SharedCollection> {
  const fx = await sharedCollection(cast);
  const joined = await api('POST', `/collections/join/${fx.ingestShare.share_token}`, { token: cast.removed.token });
  expect(joined.status).toBe(200);
  const removal = await api('DELETE', `/collections/${fx.collectionId}/members/${cast.removed.id}`, { token: cast.owner.token });
  expect(removal.status).toBe(200);
  return fx;
}

const users = () => Object.values(cast).map((u) => u.id);

describe.each(ENDPOINTS)('$method $name', (endpoint) => {
  it('refuses every bad credential with 401 and changes nothing', async () => {
    const fx = await sharedCollection(cast);
    for (const token of badTokens) {
      const header = await token.header(cast);
      const before = await snapshot(users());
      const { path, body } = request(endpoint, fx, cast);
      const response = await api(endpoint.method, path, { headers: header === undefined ? {} : { Authorization: header }, body });
      expect(response.status, token.name).toBe(401);
      expect(response.body, token.name).toMatchObject({
        detail: token.detail,
        code: expect.any(String),
        request_id: expect.any(String),
      });
      expect(await snapshot(users()), token.name).toBe(before);
    }
  });

  it('gives each kind of caller the contract status, and refusals change nothing', async () => {
    const fx = await fixture();
    const order = [...ROLES].sort((a, b) => Number(endpoint.expect[a] === 200) - Number(endpoint.expect[b] === 200));
    for (const role of order) {
      const before = await snapshot(users());
      const { path, body } = request(endpoint, fx, cast);
      const response = await api(endpoint.method, path, { token: cast[role].token, body });
      expect(response.status, `${role}: ${JSON.stringify(response.body)}`).toBe(endpoint.expect[role]);
      if (response.status !== 200) {
        expect(response.body.code, role).toBe(response.status === 403 ? 'forbidden' : 'not_found');
        expect(await snapshot(users()), role).toBe(before);
      }
    }
  });

  if (!COLLECTION_SCOPED.has(endpoint)) return;
  it('answers 404 for a collection that does not exist, to every caller', async () => {
    const fx = await sharedCollection(cast);
    const { path, body } = request(endpoint, { ...fx, collectionId: randomUUID() }, cast);
    for (const role of ROLES) {
      const response = await api(endpoint.method, path, { token: cast[role].token, body });
      expect(response.status, role).toBe(404);
    }
  });
});
