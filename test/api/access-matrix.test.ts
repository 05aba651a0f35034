import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  api,
  db,
  type ErrorBody,
  fileForm,
  type Method,
  mintToken,
  signUp,
  snapshot,
  stack,
  type TestUser,
} from '../support/client.ts';
import { type Cast, castUsers, type SharedCollection, sharedCollection } from '../support/fixtures.ts';
import { queuedJob } from '../support/ingest.ts';

/**
 * The cast, an outsider whose token says `is_admin: "false"` (a string is no admin grant), and a
 * member who joined through the ingest link and was then removed: that link no longer admits them.
 */
type Callers = Cast & { falseAdmin: TestUser; removed: TestUser };
type Role = keyof Callers;
const ROLES: Role[] = ['stranger', 'falseAdmin', 'removed', 'admin', 'memberQuery', 'memberIngest', 'owner'];

type Scope = 'query' | 'ingest' | 'collections:read' | 'collections:write';
const ALL_SCOPES: Scope[] = ['query', 'ingest', 'collections:read', 'collections:write'];

/**
 * Where an endpoint acts, which decides what a key restricted to one collection may do there: in the
 * fixture's collection, in the personal namespace, on a new collection, on the caller's own things
 * anywhere (listings, which leave out what the restriction excludes), or in the fixture's collection and
 * another that every participant of it may use too (`collection_ids`: one collection is all a restricted key reaches).
 */
type Place = 'collection' | 'personal' | 'new' | 'anywhere' | 'several';

interface Endpoint {
  name: string;
  method: Method;
  path: string;
  body?: Record<string, unknown>;
  /** A multipart upload of a small text file (unique bytes each time) instead of a JSON body. */
  upload?: boolean;
  /** Who may call it: a bearer token only, or also an API key with this scope (the README's table). */
  scope: Scope | 'bearer';
  place: Place;
  /** It can succeed only once per fixture (a deletion, a revocation): every success gets a fixture of its own. */
  consumes?: boolean;
  /** Another form of an operation listed already (another place, another fixture): not an operation of its own. */
  variant?: boolean;
  /** What a success answers, when not 200: 201 for a creation, 202 for a start. */
  success?: 201 | 202;
  /**
   * A success may also be a 503 naming what is down: readiness, which another file's injected fault (rate-limits
   * takes Redis down) can fail while this one runs. Either way the caller got past the access rules.
   */
  orUnavailable?: boolean;
  /** Expected status for each authenticated caller (200: it succeeds); successes run last, the owner's very last. */
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
// The owner's own job, key or webhook: not there for anyone else, whatever their part in the collection.
const ownerThing = { stranger: 404, falseAdmin: 404, removed: 404, admin: 404, memberQuery: 404, memberIngest: 404, owner: 200 };

/** `route` is the method and the path; the path, and the string values of the body, may name parts of the fixture. */
function endpoint(
  name: string,
  route: `${Method} ${string}`,
  access: {
    scope: Scope | 'bearer';
    place: Place;
    consumes?: boolean;
    upload?: boolean;
    variant?: boolean;
    success?: 201 | 202;
    orUnavailable?: boolean;
  },
  expect: Record<Role, number>,
  body?: Record<string, unknown>,
): Endpoint {
  const [method, path] = route.split(' ') as [Method, string];
  return { name, method, path, body, expect, ...access };
}

const inCollection = (scope: Scope | 'bearer', consumes = false) => ({ scope, place: 'collection' as const, consumes });
const question = { question: 'anything at all', collection_id: '{collection}' };
const acrossCollections = { question: 'anything at all', collection_ids: ['{collection}', '{alsoShared}'] };
const inSeveral = { scope: 'query' as const, place: 'several' as const, variant: true };
/** The owner's source in the collection, or in their personal space: each operation on a source, on either. */
const onCollectionSource = (extra: { consumes?: boolean; success?: 202 } = {}) => ({
  scope: 'ingest' as const,
  place: 'collection' as const,
  ...extra,
});
const onPersonalSource = (extra: { consumes?: boolean; success?: 202 } = {}) => ({
  scope: 'ingest' as const,
  place: 'personal' as const,
  variant: true,
  ...extra,
});
const article = '{pages}/article.html';
const ENDPOINTS: Endpoint[] = [
  endpoint('create collection', 'POST /collections/', { scope: 'collections:write', place: 'new' }, everyone, { name: 'Mine' }),
  endpoint('list collections', 'GET /collections/', { scope: 'collections:read', place: 'anywhere' }, everyone),
  endpoint('delete collection', 'DELETE /collections/{collection}', inCollection('collections:write', true), ownerOnly),
  endpoint('get config', 'GET /collections/{collection}/config', inCollection('bearer'), adminOnly),
  endpoint('put config', 'PUT /collections/{collection}/config', inCollection('bearer'), adminOnly, {
    chunk_size: 500,
    retrieval_strategy: 'mmr',
  }),
  endpoint('rechunk', 'POST /collections/{collection}/rechunk', inCollection('bearer'), adminOnly),
  endpoint('list documents', 'GET /collections/{collection}/documents', inCollection('collections:read'), participants),
  endpoint('delete document', 'DELETE /collections/{collection}/documents/{document}', inCollection('ingest', true), ownerOnly),
  // The fixture's document is still being ingested: the owner passes every check and gets the 409 that says so.
  endpoint(
    'patch document',
    'PATCH /collections/{collection}/documents/{document}',
    inCollection('ingest'),
    { ...ownerOnly, owner: 409 },
    { metadata: { label: 'x' } },
  ),
  endpoint(
    'passages',
    'GET /collections/{collection}/documents/{document}/passages/{chunk}',
    inCollection('query'),
    participants,
  ),
  endpoint('upload file', 'POST /ingest/?collection_id={collection}', { ...inCollection('ingest'), upload: true }, ingesters),
  endpoint('ingest url', 'POST /ingest/url', inCollection('ingest'), ingesters, {
    url: '{pages}/article.html',
    collection_id: '{collection}',
  }),
  endpoint('list jobs', 'GET /ingest/jobs', { scope: 'ingest', place: 'anywhere' }, everyone),
  endpoint('read job', 'GET /ingest/jobs/{job}', inCollection('ingest'), ownerThing),
  endpoint('cancel job', 'POST /ingest/jobs/{job}/cancel', inCollection('ingest'), ownerThing),
  endpoint('personal documents', 'GET /ingest/documents', { scope: 'collections:read', place: 'personal' }, everyone),
  endpoint(
    'delete personal document',
    'DELETE /ingest/documents/{personalDocument}',
    { scope: 'ingest', place: 'personal', consumes: true },
    ownerThing,
  ),
  endpoint(
    'patch personal document',
    'PATCH /ingest/documents/{personalDocument}',
    { scope: 'ingest', place: 'personal' },
    { ...ownerThing, owner: 409 },
    { metadata: { label: 'x' } },
  ),
  endpoint(
    'personal passages',
    'GET /ingest/documents/{personalDocument}/passages/{chunk}',
    { scope: 'query', place: 'personal' },
    ownerThing,
  ),
  endpoint('search', 'POST /query/search', inCollection('query'), participants, question),
  endpoint('ask', 'POST /query/', inCollection('query'), participants, question),
  // The same two operations over several collections: variants, not operations of their own.
  endpoint('search across collections', 'POST /query/search', inSeveral, participants, acrossCollections),
  endpoint('ask across collections', 'POST /query/', inSeveral, participants, acrossCollections),
  endpoint('rate answer', 'PUT /query/answers/{ownerAnswer}/feedback', inCollection('query'), ownerThing, {
    feedback: 'down',
    comment: 'Not it',
  }),
  endpoint('list evaluations', 'GET /evals/{collection}', inCollection('collections:read'), participants),
  endpoint('evaluation stats', 'GET /evals/{collection}/stats', inCollection('collections:read'), participants),
  endpoint('create share', 'POST /collections/{collection}/shares', inCollection('bearer'), ownerOnly, { permission: 'query' }),
  endpoint('list shares', 'GET /collections/{collection}/shares', inCollection('bearer'), ownerOnly),
  endpoint('revoke share', 'DELETE /collections/{collection}/shares/{queryShare}', inCollection('bearer', true), ownerOnly),
  endpoint('remove member', 'DELETE /collections/{collection}/members/{memberQuery}', inCollection('bearer', true), ownerOnly),
  endpoint('join', 'POST /collections/join/{ingestShareToken}', { scope: 'bearer', place: 'anywhere' }, joiners),
  endpoint('create session', 'POST /chat/{collection}/sessions', inCollection('query'), participants, { title: 'New' }),
  endpoint('list sessions', 'GET /chat/{collection}/sessions', inCollection('query'), participants),
  endpoint('read session', 'GET /chat/{collection}/sessions/{ownerSession}', inCollection('query'), sessionOwner),
  endpoint('rename session', 'PATCH /chat/{collection}/sessions/{ownerSession}', inCollection('query'), sessionOwner, {
    title: 'Renamed',
  }),
  endpoint('delete session', 'DELETE /chat/{collection}/sessions/{ownerSession}', inCollection('query', true), sessionOwner),
  endpoint('chat members', 'GET /chat/{collection}/members', inCollection('bearer'), participants),
  endpoint('share session', 'POST /chat/{collection}/sessions/{ownerSession}/share', inCollection('bearer'), sessionOwner, {
    target_user_id: '{memberQuery}',
  }),
  endpoint('create key', 'POST /keys/', { scope: 'bearer', place: 'anywhere' }, everyone, { name: 'k', scopes: ['query'] }),
  endpoint('list keys', 'GET /keys/', { scope: 'bearer', place: 'anywhere' }, everyone),
  endpoint('revoke key', 'DELETE /keys/{ownerKey}', { scope: 'bearer', place: 'anywhere', consumes: true }, ownerThing),
  endpoint('create webhook', 'POST /webhooks/', { scope: 'bearer', place: 'anywhere' }, everyone, {
    url: '{receiver}/hook',
    events: ['ingest.failed'],
  }),
  endpoint('list webhooks', 'GET /webhooks/', { scope: 'bearer', place: 'anywhere' }, everyone),
  endpoint('update webhook', 'PATCH /webhooks/{ownerHook}', { scope: 'bearer', place: 'anywhere' }, ownerThing, {
    active: false,
  }),
  endpoint('webhook deliveries', 'GET /webhooks/{ownerHook}/deliveries', { scope: 'bearer', place: 'anywhere' }, ownerThing),
  endpoint('rotate secret', 'POST /webhooks/{ownerHook}/rotate-secret', { scope: 'bearer', place: 'anywhere' }, ownerThing),
  endpoint('delete webhook', 'DELETE /webhooks/{ownerHook}', { scope: 'bearer', place: 'anywhere', consumes: true }, ownerThing),
  // Sources: a collection's are its owner's and its ingest members' to manage; a personal one its creator's alone.
  endpoint('create source', 'POST /sources', { scope: 'ingest', place: 'collection', success: 201 }, ingesters, {
    kind: 'url',
    url: article,
    collection_id: '{collection}',
  }),
  endpoint(
    'create personal source',
    'POST /sources',
    { scope: 'ingest', place: 'personal', success: 201, variant: true },
    everyone,
    { kind: 'url', url: article },
  ),
  endpoint('list sources', 'GET /sources', { scope: 'ingest', place: 'anywhere' }, everyone),
  endpoint(
    "list a collection's sources",
    'GET /sources?collection_id={collection}',
    { scope: 'ingest', place: 'collection', variant: true },
    ingesters,
  ),
  endpoint(
    'list personal sources',
    'GET /sources?collection_id=personal',
    { scope: 'ingest', place: 'personal', variant: true },
    everyone,
  ),
  endpoint('read source', 'GET /sources/{collectionSource}', onCollectionSource(), ingesters),
  endpoint('update source', 'PATCH /sources/{collectionSource}', onCollectionSource(), ingesters, { paused: true }),
  endpoint('delete source', 'DELETE /sources/{collectionSource}', onCollectionSource({ consumes: true }), ingesters),
  // A second sync while the first runs is a 409: each success gets a source of its own.
  endpoint(
    'sync source',
    'POST /sources/{collectionSource}/sync',
    onCollectionSource({ consumes: true, success: 202 }),
    ingesters,
  ),
  endpoint('source runs', 'GET /sources/{collectionSource}/runs', onCollectionSource(), ingesters),
  endpoint('source pages', 'GET /sources/{collectionSource}/pages', onCollectionSource(), ingesters),
  endpoint('read personal source', 'GET /sources/{personalSource}', onPersonalSource(), ownerThing),
  endpoint('update personal source', 'PATCH /sources/{personalSource}', onPersonalSource(), ownerThing, { paused: true }),
  endpoint('delete personal source', 'DELETE /sources/{personalSource}', onPersonalSource({ consumes: true }), ownerThing),
  endpoint(
    'sync personal source',
    'POST /sources/{personalSource}/sync',
    onPersonalSource({ consumes: true, success: 202 }),
    ownerThing,
  ),
  endpoint('personal source runs', 'GET /sources/{personalSource}/runs', onPersonalSource(), ownerThing),
  endpoint('personal source pages', 'GET /sources/{personalSource}/pages', onPersonalSource(), ownerThing),
  // Readiness, for operators: an admin's bearer token when READY_TOKEN is not set (faults-ready.test.ts has the rest).
  endpoint('readiness', 'GET /ready', { scope: 'bearer', place: 'anywhere', orUnavailable: true }, adminOnly),
  // The audit log: a collection's entries are its owner's and an admin's to read; everyone reads the entries they made.
  endpoint("read a collection's audit log", 'GET /audit?collection_id={collection}', inCollection('bearer'), {
    ...ownerOnly,
    admin: 200,
  }),
  endpoint('read own audit log', 'GET /audit', { scope: 'bearer', place: 'anywhere', variant: true }, everyone),
  // Model usage: a collection's is its owner's and an admin's to read; everyone reads their own.
  endpoint("read a collection's usage", 'GET /usage?collection_id={collection}', inCollection('bearer'), {
    ...ownerOnly,
    admin: 200,
  }),
  endpoint('read own usage', 'GET /usage', { scope: 'bearer', place: 'anywhere', variant: true }, everyone),
  // The admin page's API: administrators only, whatever else a caller owns.
  endpoint('admin overview', 'GET /admin/overview', { scope: 'bearer', place: 'anywhere' }, adminOnly),
  endpoint('admin users', 'GET /admin/users', { scope: 'bearer', place: 'anywhere' }, adminOnly),
  endpoint('admin jobs', 'GET /admin/jobs?state=failed', { scope: 'bearer', place: 'anywhere' }, adminOnly),
  // The fixture's job is queued, not stuck: past the access rule, an admin is told it cannot be retried.
  endpoint('retry a job', 'POST /admin/jobs/{job}/retry', { scope: 'bearer', place: 'anywhere' }, { ...adminOnly, admin: 409 }),
];

/** The shared collection and the owner's own things the paths name. */
interface Fixture extends SharedCollection {
  /** A queued job of the owner's in the collection, and its document. */
  job: string;
  document: string;
  personalDocument: string;
  /** An answer the owner was given in the collection (its evaluation record). */
  ownerAnswer: string;
  ownerKey: string;
  ownerHook: string;
  /** Sources of the owner's, never synced yet: one in the collection, one in the personal space. */
  collectionSource: string;
  personalSource: string;
}

/** An endpoint's path and body with every {name} replaced by what it stands for in this fixture. */
function request({ path, body }: Endpoint, fx: Fixture, cast: Callers) {
  const values: Record<string, string> = {
    collection: fx.collectionId,
    queryShare: fx.queryShare.id,
    ingestShareToken: fx.ingestShare.share_token,
    ownerSession: fx.sessions.owner,
    memberQuery: cast.memberQuery.id,
    pages: stack.pagesUrl,
    receiver: stack.receiverUrl,
    job: fx.job,
    document: fx.document,
    personalDocument: fx.personalDocument,
    chunk: '0',
    ownerAnswer: fx.ownerAnswer,
    ownerKey: fx.ownerKey,
    ownerHook: fx.ownerHook,
    collectionSource: fx.collectionSource,
    personalSource: fx.personalSource,
    alsoShared,
  };
  const fill = (template: string) => template.replace(/\{(\w+)\}/g, (_, name: string) => values[name] as string);
  const filled = (value: unknown): unknown =>
    typeof value === 'string' ? fill(value) : Array.isArray(value) ? value.map(filled) : value;
  return {
    path: fill(path),
    body: body && Object.fromEntries(Object.entries(body).map(([key, value]) => [key, filled(value)])),
  };
}

/** A bearer token or an API key, as the request's credential headers. */
type Credential = { token: string } | { apiKey: string };
const headersOf = (credential: Credential): Record<string, string> =>
  'token' in credential ? { Authorization: `Bearer ${credential.token}` } : { 'X-API-Key': credential.apiKey };

/** Sends the endpoint's request with these headers: JSON, or a multipart upload of fresh bytes. */
function send(e: Endpoint, fx: Fixture, headers: Record<string, string>) {
  const { path, body } = request(e, fx, cast);
  // Fresh bytes each time: the same bytes twice are one document, which would answer for the second upload.
  const upload = e.upload ? fileForm('notes.txt', `Notes ${randomUUID()}: the tide comes in twice a day.`) : undefined;
  return api(e.method, path, { headers, body: upload ?? body });
}

// Every endpoint that names the collection in its path or body.
const COLLECTION_SCOPED = new Set(ENDPOINTS.filter((e) => JSON.stringify(e).includes('{collection}')));

let cast: Callers;
const badTokens: { name: string; header: (cast: Callers) => Promise<Record<string, string>>; detail: string }[] = [
  { name: 'no token', header: async () => ({}), detail: 'Not authenticated' },
  { name: 'malformed header', header: async (c) => ({ Authorization: `Token ${c.owner.token}` }), detail: 'Not authenticated' },
  { name: 'empty bearer', header: async () => ({ Authorization: 'Bearer ' }), detail: 'Not authenticated' },
  {
    name: 'expired',
    header: async (c) => bearer(await mintToken({ sub: c.owner.id }, { expiresIn: Math.floor(Date.now() / 1000) - 120 })),
    detail: 'Token expired',
  },
  {
    name: 'bad signature',
    header: async (c) => {
      const { privateKey } = await generateKeyPair('ES256');
      return bearer(await mintToken({ sub: c.owner.id }, { key: privateKey }));
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
      return bearer(`${h}.${forged}.${s}`);
    },
    detail: 'Invalid token',
  },
  {
    name: 'wrong audience',
    header: async (c) => bearer(await mintToken({ sub: c.owner.id, aud: 'anon' })),
    detail: 'Invalid token',
  },
  {
    name: 'alg none',
    header: async (c) => {
      const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const now = Math.floor(Date.now() / 1000);
      return bearer(
        `${part({ alg: 'none', typ: 'JWT' })}.${part({ sub: c.owner.id, aud: 'authenticated', iat: now, exp: now + 600 })}.`,
      );
    },
    detail: 'Invalid token',
  },
  {
    name: 'HS256 signed with the public key',
    header: async (c) => {
      const { d: _d, ...publicJwk } = JSON.parse(stack.privateJwk);
      const secret = new TextEncoder().encode(JSON.stringify(publicJwk));
      return bearer(await mintToken({ sub: c.owner.id }, { key: secret, alg: 'HS256' }));
    },
    detail: 'Invalid token',
  },
  {
    name: 'unknown kid',
    header: async (c) => {
      const { privateKey } = await generateKeyPair('ES256', { extractable: true });
      await exportJWK(privateKey);
      return bearer(await mintToken({ sub: c.owner.id }, { key: privateKey, kid: 'rotated-away' }));
    },
    detail: 'Invalid token',
  },
  {
    name: 'jku header pointing elsewhere',
    header: async (c) => bearer(await mintToken({ sub: c.owner.id }, { header: { jku: 'http://127.0.0.1:1/evil.json' } })),
    detail: 'Invalid token',
  },
  { name: 'API key of the wrong shape', header: async () => ({ 'X-API-Key': 'not-a-key' }), detail: 'Invalid API key' },
  {
    name: 'API key that was never issued',
    header: async () => ({
      'X-API-Key': `rag_${Buffer.from(randomUUID() + randomUUID())
        .toString('base64url')
        .slice(0, 43)}`,
    }),
    detail: 'Invalid API key',
  },
  { name: 'revoked API key', header: async () => ({ 'X-API-Key': deadKeys.revoked }), detail: 'API key revoked' },
  { name: 'expired API key', header: async () => ({ 'X-API-Key': deadKeys.expired }), detail: 'API key expired' },
  {
    name: 'a bearer token and an API key together',
    header: async (c) => ({ Authorization: `Bearer ${c.owner.token}`, 'X-API-Key': liveOwnerKey }),
    detail: 'Send either a bearer token or an API key, not both',
  },
];

function bearer(token: string) {
  return { Authorization: `Bearer ${token}` };
}

/**
 * The API-key callers. Each key authenticates as its owner, limited by its scopes and restriction;
 * `ofMember` is a key of the member holding `query`, which no scope lifts above that permission.
 */
interface KeyCaller {
  owner: 'owner' | 'memberQuery';
  scopes: Scope[];
  restriction: 'inside' | 'outside' | null;
}
const KEY_CALLERS: Record<string, KeyCaller> = {
  queryKey: { owner: 'owner', scopes: ['query'], restriction: null },
  ingestKey: { owner: 'owner', scopes: ['ingest'], restriction: null },
  readKey: { owner: 'owner', scopes: ['collections:read'], restriction: null },
  writeKey: { owner: 'owner', scopes: ['collections:write'], restriction: null },
  insideKey: { owner: 'owner', scopes: ALL_SCOPES, restriction: 'inside' },
  outsideKey: { owner: 'owner', scopes: ALL_SCOPES, restriction: 'outside' },
  memberKey: { owner: 'memberQuery', scopes: ALL_SCOPES, restriction: null },
};

/** What a key caller gets: the scope first, then the restriction, then whatever its owner would get. */
function keyExpectation(e: Endpoint, key: KeyCaller): number {
  if (e.scope === 'bearer' || !key.scopes.includes(e.scope)) return 403;
  if (key.restriction && (e.place === 'personal' || e.place === 'new' || e.place === 'several')) return 403;
  if (key.restriction === 'outside' && e.place === 'collection') return 403;
  return e.expect[key.owner];
}

let deadKeys: { revoked: string; expired: string };
let liveOwnerKey: string;
/** The keys made once for the whole file, which the fixtures' clean-up leaves. */
let lastingKeyIds: string[];
let otherCollection: string;
/** A collection of the owner's that both members of every fixture joined (and `removed` never did). */
let alsoShared: string;

async function createKey(
  user: TestUser,
  scopes: Scope[],
  collectionId: string | null = null,
): Promise<{ id: string; key: string }> {
  const created = await api('POST', '/keys/', {
    token: user.token,
    body: { name: 'matrix', scopes, collection_id: collectionId },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body;
}

beforeAll(async () => {
  const [users, falseAdmin, removed] = await Promise.all([castUsers(), signUp('false-admin'), signUp('removed')]);
  const token = await mintToken({ sub: falseAdmin.id, email: falseAdmin.email, app_metadata: { is_admin: 'false' } });
  cast = { ...users, falseAdmin: { ...falseAdmin, token }, removed };
  const other = await api('POST', '/collections/', { token: cast.owner.token, body: { name: 'Elsewhere' } });
  otherCollection = other.body.id;
  const also = await sharedCollection(cast, 'Also shared');
  alsoShared = also.collectionId;
  const live = await createKey(cast.owner, ALL_SCOPES);
  liveOwnerKey = live.key;
  const revoked = await createKey(cast.owner, ALL_SCOPES);
  expect((await api('DELETE', `/keys/${revoked.id}`, { token: cast.owner.token })).status).toBe(200);
  const expired = await createKey(cast.owner, ALL_SCOPES);
  await db()`update api_keys set expires_at = now() - interval '1 minute' where id = ${expired.id}`;
  deadKeys = { revoked: revoked.key, expired: expired.key };
  lastingKeyIds = [live.id, revoked.id, expired.id];
});

/**
 * The shared collection, which `removed` joined through its ingest link and then left, removed by the
 * owner; a queued job of the owner's in it, a personal document (each with its first chunk indexed), a key and a
 * webhook of the owner's.
 */
async function fixture(): Promise<Fixture> {
  const fx = await sharedCollection(cast);
  const joined = await api('POST', `/collections/join/${fx.ingestShare.share_token}`, { token: cast.removed.token });
  expect(joined.status).toBe(200);
  const removal = await api('DELETE', `/collections/${fx.collectionId}/members/${cast.removed.id}`, { token: cast.owner.token });
  expect(removal.status).toBe(200);
  const job = await queuedJob(cast.owner.id, fx.collectionId);
  const personal = await queuedJob(cast.owner.id, null);
  // Each document's first chunk indexed already, for the passages a citation opens.
  for (const id of [job.documentId, personal.documentId]) {
    await db()`insert into document_chunks (document_id, chunk_index, vector_id, chunk_type, text, state)
               values (${id}, 0, ${`fixture-${id}-0`}, 'text', 'A passage of the fixture.', 'done')`;
  }
  // A user may have 20 webhooks and 50 active keys; every fixture makes one and several of them.
  await db()`delete from webhooks where user_id = ${cast.owner.id}`;
  await db()`delete from api_keys where user_id in ${db()([cast.owner.id, cast.memberQuery.id])} and id not in ${db()(lastingKeyIds)}`;
  const hook = await api('POST', '/webhooks/', {
    token: cast.owner.token,
    body: { url: `${stack.receiverUrl}/hook`, events: ['ingest.failed'] },
  });
  expect(hook.status).toBe(200);
  const [answer] = await db()<{ id: string }[]>`
    insert into evaluations (collection_id, user_id, question, answer, sources, total_latency_ms, embedding_latency_ms,
                             retrieval_latency_ms, engine, retrieval_strategy, top_k)
    values (${fx.collectionId}, ${cast.owner.id}, 'Asked', 'Answered [1].', '[]'::jsonb, 10, 0, 5, 'devstack:extractive',
            'similarity', 5)
    returning id`;
  // Written as the API would write them, without the first sync it starts: a sync on demand may start at once.
  const [collectionSource, personalSource] = await Promise.all(
    [fx.collectionId, null].map(async (collectionId) => {
      const [source] = await db()<{ id: string }[]>`
        insert into sources (user_id, collection_id, kind, url)
        values (${cast.owner.id}, ${collectionId}, 'url', ${`${stack.pagesUrl}/article.html`})
        returning id`;
      return source?.id as string;
    }),
  );
  return {
    ...fx,
    job: job.jobId,
    ownerAnswer: answer?.id as string,
    document: job.documentId,
    personalDocument: personal.documentId,
    ownerKey: (await createKey(cast.owner, ['query'])).id,
    ownerHook: hook.body.id,
    collectionSource: collectionSource as string,
    personalSource: personalSource as string,
  };
}

/** Keys for this fixture: the restricted ones name its collection, or another of the owner's. */
async function keysFor(fx: Fixture): Promise<Record<string, string>> {
  const entries = await Promise.all(
    Object.entries(KEY_CALLERS).map(async ([name, key]) => {
      const restriction = key.restriction === 'inside' ? fx.collectionId : key.restriction === 'outside' ? otherCollection : null;
      return [name, (await createKey(cast[key.owner], key.scopes, restriction)).key] as const;
    }),
  );
  return Object.fromEntries(entries);
}

const users = () => Object.values(cast).map((u) => u.id);

/** The snapshot, with the users' sources and their syncs: a refusal neither changes, removes nor syncs one. */
async function state(): Promise<string> {
  const ids = users();
  const [row] = await db()<{ fingerprint: string }[]>`
    select md5(concat_ws('|',
      (select string_agg(concat_ws(',', id, collection_id, url, schedule, paused, updated_at), ';' order by id)
         from sources where user_id = any(${ids}::uuid[])),
      (select string_agg(concat_ws(',', r.id, r.trigger), ';' order by r.id)
         from source_runs r join sources s on s.id = r.source_id where s.user_id = any(${ids}::uuid[]))
    )) as fingerprint`;
  return `${await snapshot(ids)} ${row?.fingerprint ?? ''}`;
}

/** What the endpoint answers where `expected` is 200 (a success): 201 or 202 for some. */
const statusOf = (e: Endpoint, expected: number) => (expected === 200 ? (e.success ?? 200) : expected);

/**
 * Waits for a sync the response started (a new source's first, or one on demand) to end: its pages become
 * documents and jobs, which would otherwise appear in the middle of a later request's snapshot.
 */
async function settle(response: { body: unknown }) {
  const body = response.body as { last_run?: { id: string } | null; source_id?: string; id?: string } | null;
  const runId = body?.last_run?.id ?? (body?.source_id ? body.id : undefined);
  if (!runId) return;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const [run] = await db()<{ status: string }[]>`select status from source_runs where id = ${runId}`;
    if (run?.status !== 'running') return;
    if (Date.now() > deadline) throw new Error(`the sync ${runId} is still running`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function expectRefusal(response: { status: number; body: unknown }, who: string) {
  // 409: past every access check, refused for the state of the thing (a document still being ingested).
  const code = response.status === 403 ? 'forbidden' : response.status === 409 ? 'conflict' : 'not_found';
  expect((response.body as Partial<ErrorBody>).code, who).toBe(code);
}

it('runs every operation of /openapi.json, with the credentials the description declares for it', async () => {
  // Path templates compared without their names, a query or a trailing slash: `/webhooks/{id}` is `/webhooks/{ownerHook}` here.
  const shape = (method: string, path: string) =>
    `${method.toUpperCase()} ${path
      .replace(/\?.*/, '')
      .replace(/\{\w+\}/g, '{}')
      .replace(/\/$/, '')}`;
  const described = (await api('GET', '/openapi.json')).body;
  const declared = Object.entries(described.paths).flatMap(([path, operations]) =>
    Object.entries(operations)
      .filter(([, operation]) => operation.security?.length)
      .map(([method, operation]) => {
        const scopes = operation.security?.find((s: { apiKey?: string[] }) => s.apiKey)?.apiKey;
        return [shape(method, path), scopes ? scopes.join(' ') : 'bearer'];
      }),
  );
  const matrix = ENDPOINTS.filter((e) => !e.variant).map((e) => [shape(e.method, e.path), e.scope]);
  expect(Object.fromEntries(matrix)).toEqual(Object.fromEntries(declared));
  expect(matrix).toHaveLength(declared.length);
});

describe.each(ENDPOINTS)('$method $name', (endpoint) => {
  it('refuses every bad credential with 401 and changes nothing', async () => {
    const fx = await fixture();
    for (const token of badTokens) {
      const headers = await token.header(cast);
      const before = await state();
      const response = await send(endpoint, fx, headers);
      expect(response.status, token.name).toBe(401);
      expect(response.body, token.name).toMatchObject({
        detail: token.detail,
        code: expect.any(String),
        request_id: expect.any(String),
      });
      expect(await state(), token.name).toBe(before);
    }
  });

  it('gives each kind of caller the contract status, and refusals change nothing', async () => {
    let fx = await fixture();
    let consumed = false;
    const order = [...ROLES].sort((a, b) => Number(endpoint.expect[a] === 200) - Number(endpoint.expect[b] === 200));
    for (const role of order) {
      const succeeds = endpoint.expect[role] === 200;
      // Something that can happen once: a second caller allowed to do it gets a fixture of its own.
      if (succeeds && endpoint.consumes && consumed) fx = await fixture();
      const before = await state();
      const response = await send(endpoint, fx, headersOf({ token: cast[role].token }));
      const expected = statusOf(endpoint, endpoint.expect[role]);
      const seen = endpoint.orUnavailable && succeeds && response.status === 503 ? expected : response.status;
      expect(seen, `${role}: ${JSON.stringify(response.body)}`).toBe(expected);
      if (succeeds) {
        consumed = true;
        await settle(response);
      } else {
        expectRefusal(response, role);
        expect(await state(), role).toBe(before);
      }
    }
  });

  it('gives each kind of API key its scope’s and its owner’s status, and refusals change nothing', async () => {
    const fx = await fixture();
    const keys = await keysFor(fx);
    const names = Object.keys(KEY_CALLERS).sort(
      (a, b) =>
        Number(keyExpectation(endpoint, KEY_CALLERS[a] as KeyCaller) === 200) -
        Number(keyExpectation(endpoint, KEY_CALLERS[b] as KeyCaller) === 200),
    );
    for (const name of names) {
      const expected = keyExpectation(endpoint, KEY_CALLERS[name] as KeyCaller);
      // Something that can happen once gets a fixture of its own for each caller it is allowed to.
      const target = expected === 200 && endpoint.consumes ? await fixture() : fx;
      const targetKeys = target === fx ? keys : await keysFor(target);
      const before = await state();
      const response = await send(endpoint, target, headersOf({ apiKey: targetKeys[name] as string }));
      expect(response.status, `${name}: ${JSON.stringify(response.body)}`).toBe(statusOf(endpoint, expected));
      if (expected === 200) await settle(response);
      else {
        expectRefusal(response, name);
        expect(await state(), name).toBe(before);
      }
    }
  });

  if (!COLLECTION_SCOPED.has(endpoint)) return;
  it('answers 404 for a collection that does not exist, to every caller that may use the endpoint', async () => {
    const fx = await fixture();
    const keys = await keysFor(fx);
    const missing = { ...fx, collectionId: randomUUID() };
    for (const role of ROLES) {
      const response = await send(endpoint, missing, headersOf({ token: cast[role].token }));
      expect(response.status, role).toBe(404);
    }
    for (const [name, key] of Object.entries(KEY_CALLERS)) {
      const allowed = endpoint.scope !== 'bearer' && key.scopes.includes(endpoint.scope);
      const response = await send(endpoint, missing, headersOf({ apiKey: keys[name] as string }));
      expect(response.status, name).toBe(allowed ? 404 : 403);
    }
  });
});
