import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, mintToken, snapshot, stack } from '../support/client.ts';
import { type Cast, castUsers, type SharedCollection, sharedCollection } from '../support/fixtures.ts';

type Role = keyof Cast;
const ROLES: Role[] = ['stranger', 'admin', 'memberQuery', 'memberIngest', 'owner'];

interface Endpoint {
  name: string;
  method: string;
  path: (fx: SharedCollection, cast: Cast) => string;
  body?: (fx: SharedCollection, cast: Cast) => unknown;
  /** Expected status for each authenticated caller; 200s run last, the owner's very last. */
  expect: Record<Role, number>;
}

const ownerOnly = { stranger: 403, admin: 403, memberQuery: 403, memberIngest: 403, owner: 200 };
const participants = { stranger: 403, admin: 403, memberQuery: 200, memberIngest: 200, owner: 200 };
const adminOnly = { stranger: 403, admin: 200, memberQuery: 403, memberIngest: 403, owner: 403 };
const everyone = { stranger: 200, admin: 200, memberQuery: 200, memberIngest: 200, owner: 200 };
const ingesters = { stranger: 403, admin: 403, memberQuery: 403, memberIngest: 200, owner: 200 };
// Another user's session is 404 to members; the collection itself is 403 to outsiders.
const sessionOwner = { stranger: 403, admin: 403, memberQuery: 404, memberIngest: 404, owner: 200 };

const ENDPOINTS: Endpoint[] = [
  { name: 'create collection', method: 'POST', path: () => '/collections/', body: () => ({ name: 'Mine' }), expect: everyone },
  { name: 'list collections', method: 'GET', path: () => '/collections/', expect: everyone },
  { name: 'delete collection', method: 'DELETE', path: (fx) => `/collections/${fx.collectionId}`, expect: ownerOnly },
  { name: 'get config', method: 'GET', path: (fx) => `/collections/${fx.collectionId}/config`, expect: adminOnly },
  {
    name: 'put config',
    method: 'PUT',
    path: (fx) => `/collections/${fx.collectionId}/config`,
    body: () => ({ chunk_size: 500, retrieval_strategy: 'mmr' }),
    expect: adminOnly,
  },
  { name: 'list documents', method: 'GET', path: (fx) => `/collections/${fx.collectionId}/documents`, expect: participants },
  {
    name: 'ingest url',
    method: 'POST',
    path: () => '/ingest/url',
    body: (fx) => ({ url: `${stack.pagesUrl}/article.html`, collection_id: fx.collectionId }),
    expect: ingesters,
  },
  {
    name: 'search',
    method: 'POST',
    path: () => '/query/search',
    body: (fx) => ({ question: 'anything at all', collection_id: fx.collectionId }),
    expect: participants,
  },
  {
    name: 'ask',
    method: 'POST',
    path: () => '/query/',
    body: (fx) => ({ question: 'anything at all', collection_id: fx.collectionId }),
    expect: participants,
  },
  { name: 'list evaluations', method: 'GET', path: (fx) => `/evals/${fx.collectionId}`, expect: participants },
  { name: 'evaluation stats', method: 'GET', path: (fx) => `/evals/${fx.collectionId}/stats`, expect: participants },
  {
    name: 'create share',
    method: 'POST',
    path: (fx) => `/collections/${fx.collectionId}/shares`,
    body: () => ({ permission: 'query' }),
    expect: ownerOnly,
  },
  { name: 'list shares', method: 'GET', path: (fx) => `/collections/${fx.collectionId}/shares`, expect: ownerOnly },
  {
    name: 'revoke share',
    method: 'DELETE',
    path: (fx) => `/collections/${fx.collectionId}/shares/${fx.queryShare.id}`,
    expect: ownerOnly,
  },
  {
    name: 'remove member',
    method: 'DELETE',
    path: (fx, cast) => `/collections/${fx.collectionId}/members/${cast.memberQuery.id}`,
    expect: ownerOnly,
  },
  { name: 'join', method: 'POST', path: (fx) => `/collections/join/${fx.ingestShare.share_token}`, expect: everyone },
  {
    name: 'create session',
    method: 'POST',
    path: (fx) => `/chat/${fx.collectionId}/sessions`,
    body: () => ({ title: 'New' }),
    expect: participants,
  },
  { name: 'list sessions', method: 'GET', path: (fx) => `/chat/${fx.collectionId}/sessions`, expect: participants },
  {
    name: 'read session',
    method: 'GET',
    path: (fx) => `/chat/${fx.collectionId}/sessions/${fx.sessions.owner}`,
    expect: sessionOwner,
  },
  {
    name: 'rename session',
    method: 'PATCH',
    path: (fx) => `/chat/${fx.collectionId}/sessions/${fx.sessions.owner}`,
    body: () => ({ title: 'Renamed' }),
    expect: sessionOwner,
  },
  {
    name: 'delete session',
    method: 'DELETE',
    path: (fx) => `/chat/${fx.collectionId}/sessions/${fx.sessions.owner}`,
    expect: sessionOwner,
  },
  { name: 'chat members', method: 'GET', path: (fx) => `/chat/${fx.collectionId}/members`, expect: participants },
  {
    name: 'share session',
    method: 'POST',
    path: (fx) => `/chat/${fx.collectionId}/sessions/${fx.sessions.owner}/share`,
    body: (_fx, cast) => ({ target_user_id: cast.memberQuery.id }),
    expect: sessionOwner,
  },
];

// Every endpoint but these names a collection in its path.
const COLLECTION_SCOPED = new Set(ENDPOINTS.filter((e) => !['create collection', 'list collections', 'join'].includes(e.name)));

let cast: Cast;
const badTokens: { name: string; header: (cast: Cast) => Promise<string | undefined>; detail: string }[] = [
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
  cast = await castUsers();
});

const users = () => Object.values(cast).map((u) => u.id);

describe.each(ENDPOINTS)('$method $name', (endpoint) => {
  it('refuses every bad credential with 401 and changes nothing', async () => {
    const fx = await sharedCollection(cast);
    for (const token of badTokens) {
      const header = await token.header(cast);
      const before = await snapshot(users());
      const response = await api(endpoint.method, endpoint.path(fx, cast), {
        headers: header === undefined ? {} : { Authorization: header },
        body: endpoint.body?.(fx, cast),
      });
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
    const fx = await sharedCollection(cast);
    const order = [...ROLES].sort((a, b) => Number(endpoint.expect[a] === 200) - Number(endpoint.expect[b] === 200));
    for (const role of order) {
      const before = await snapshot(users());
      const response = await api(endpoint.method, endpoint.path(fx, cast), {
        token: cast[role].token,
        body: endpoint.body?.(fx, cast),
      });
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
    const missing = { ...fx, collectionId: randomUUID() };
    for (const role of ROLES) {
      const response = await api(endpoint.method, endpoint.path(missing, cast), {
        token: cast[role].token,
        body: endpoint.body?.(missing, cast),
      });
      expect(response.status, role).toBe(404);
    }
  });
});
