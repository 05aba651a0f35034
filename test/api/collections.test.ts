import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, db, makeAdmin, signUp, type TestUser } from '../support/client.ts';
import { collectionWithLink } from '../support/fixtures.ts';

let owner: TestUser;
let admin: TestUser;

beforeAll(async () => {
  [owner, admin] = await Promise.all([signUp('owner'), signUp('admin').then(makeAdmin)]);
});

describe('POST /collections/', () => {
  it('creates a collection owned by the caller, with and without the trailing slash', async () => {
    for (const path of ['/collections/', '/collections'] as const) {
      const response = await api('POST', path, { token: owner.token, body: { name: '  Papers  ' } });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ id: expect.any(String), name: 'Papers', config: {}, user_id: owner.id });
      expect(new Date(response.body.created_at).toISOString()).toBe(response.body.created_at);
    }
  });

  it.each([
    ['missing name', {}, ['body', 'name'], 'missing'],
    ['empty name', { name: '' }, ['body', 'name'], 'too_small'],
    ['blank name', { name: '   ' }, ['body', 'name'], 'too_small'],
    ['name over 200 characters', { name: 'x'.repeat(201) }, ['body', 'name'], 'too_big'],
    ['name of the wrong type', { name: 42 }, ['body', 'name'], 'invalid_type'],
    // A NUL was a 500 (Postgres refuses it in text); every control character is refused in a name.
    ['name with a NUL', { name: 'Pa\u0000pers' }, ['body', 'name'], 'invalid_format'],
    ['name with a line break', { name: 'Two\nlines' }, ['body', 'name'], 'invalid_format'],
    ['name with an escape character', { name: 'Red \u001b[31m' }, ['body', 'name'], 'invalid_format'],
  ])('refuses a %s with 422 and a {loc, msg, type} list', async (_case, body, loc, type) => {
    const response = await api('POST', '/collections/', { token: owner.token, body });
    expect(response.status).toBe(422);
    expect(response.body.code).toBe('validation_failed');
    expect(response.body.detail).toEqual([{ loc, msg: expect.any(String), type }]);
    expect(response.headers.get('x-request-id')).toBe(response.body.request_id);
  });

  it('accepts exactly 200 characters', async () => {
    const response = await api('POST', '/collections/', { token: owner.token, body: { name: 'y'.repeat(200) } });
    expect(response.status).toBe(200);
  });

  it('refuses a body that is not JSON with 422', async () => {
    const response = await api('POST', '/collections/', { token: owner.token, body: '{"name": ' });
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([{ loc: ['body'], msg: expect.any(String), type: 'json_invalid' }]);
  });
});

describe('GET /collections/', () => {
  it('lists owned collections newest first, without shared flags, and nobody else’s', async () => {
    const user = await signUp('lister');
    const first = await api('POST', '/collections/', { token: user.token, body: { name: 'First' } });
    const second = await api('POST', '/collections/', { token: user.token, body: { name: 'Second' } });
    await api('POST', '/collections/', { token: owner.token, body: { name: 'Not yours' } });
    const response = await api('GET', '/collections', { token: user.token });
    expect(response.status).toBe(200);
    expect(response.body.map((c: { id: string }) => c.id)).toEqual([second.body.id, first.body.id]);
    expect(response.body[0]).not.toHaveProperty('shared');
    expect(response.body[0]).not.toHaveProperty('permission');
  });
});

describe('config', () => {
  it('returns the defaults until an admin stores a config, then the stored config', async () => {
    const { body: collection } = await api('POST', '/collections/', { token: owner.token, body: { name: 'Configured' } });
    const path = `/collections/${collection.id}/config` as const;
    const reranking = { rerank: false, rerank_candidates: 10 };
    expect((await api('GET', path, { token: admin.token })).body).toEqual({
      chunk_size: 1000,
      retrieval_strategy: 'similarity',
      ...reranking,
    });

    const put = await api('PUT', path, { token: admin.token, body: { chunk_size: 400, retrieval_strategy: 'threshold' } });
    expect(put).toMatchObject({ status: 200, body: { chunk_size: 400, retrieval_strategy: 'threshold' } });
    expect((await api('GET', path, { token: admin.token })).body).toEqual({
      chunk_size: 400,
      retrieval_strategy: 'threshold',
      ...reranking,
    });
    const [row] = await db()`select config from collections where id = ${collection.id}`;
    expect(row?.config).toEqual({ chunk_size: 400, retrieval_strategy: 'threshold' });
  });

  it('merges a partially stored config over the defaults', async () => {
    const { body: collection } = await api('POST', '/collections/', { token: owner.token, body: { name: 'Partial' } });
    await db()`update collections set config = '{"chunk_size": 2000}'::jsonb where id = ${collection.id}`;
    const response = await api('GET', `/collections/${collection.id}/config`, { token: admin.token });
    expect(response.body).toEqual({ chunk_size: 2000, retrieval_strategy: 'similarity', rerank: false, rerank_candidates: 10 });
  });

  it.each([
    ['chunk_size below 100', { chunk_size: 99, retrieval_strategy: 'mmr' }],
    ['chunk_size above 8000', { chunk_size: 8001, retrieval_strategy: 'mmr' }],
    ['a fractional chunk_size', { chunk_size: 500.5, retrieval_strategy: 'mmr' }],
    ['chunk_size as a string', { chunk_size: '500', retrieval_strategy: 'mmr' }],
    ['an unknown strategy', { chunk_size: 500, retrieval_strategy: 'bm25' }],
    ['a missing strategy', { chunk_size: 500 }],
    ['an unknown field', { chunk_size: 500, retrieval_strategy: 'mmr', top_k: 3 }],
  ])('refuses %s with 422 and keeps the stored config', async (_case, body) => {
    const { body: collection } = await api('POST', '/collections/', { token: owner.token, body: { name: 'Strict' } });
    const response = await api('PUT', `/collections/${collection.id}/config`, { token: admin.token, body });
    expect(response.status).toBe(422);
    expect(response.body.code).toBe('validation_failed');
    const [row] = await db()`select config from collections where id = ${collection.id}`;
    expect(row?.config).toEqual({});
  });

  it('accepts the bounds 100 and 8000', async () => {
    const { body: collection } = await api('POST', '/collections/', { token: owner.token, body: { name: 'Bounds' } });
    for (const chunk_size of [100, 8000]) {
      const response = await api('PUT', `/collections/${collection.id}/config`, {
        token: admin.token,
        body: { chunk_size, retrieval_strategy: 'similarity' },
      });
      expect(response.status).toBe(200);
    }
  });
});

describe('DELETE /collections/{id}', () => {
  it('deletes the collection and every child row', async () => {
    const member = await signUp('member');
    const { collection, link: share } = await collectionWithLink(owner, 'Doomed', 'query');
    await api('POST', `/collections/join/${share.share_token}`, { token: member.token });
    const { body: session } = await api('POST', `/chat/${collection.id}/sessions`, { token: member.token });
    await db()`insert into chat_messages (session_id, role, content) values (${session.id}, 'user', 'hello')`;

    const response = await api('DELETE', `/collections/${collection.id}/`, { token: owner.token });
    expect(response).toMatchObject({ status: 200, body: { deleted: collection.id } });

    const [counts] = await db()`
      select (select count(*) from collections where id = ${collection.id})::int as collections,
             (select count(*) from collection_shares where collection_id = ${collection.id})::int as shares,
             (select count(*) from collection_members where collection_id = ${collection.id})::int as members,
             (select count(*) from chat_sessions where collection_id = ${collection.id})::int as sessions,
             (select count(*) from chat_messages where session_id = ${session.id})::int as messages`;
    expect(counts).toEqual({ collections: 0, shares: 0, members: 0, sessions: 0, messages: 0 });
    expect((await api('DELETE', `/collections/${collection.id}`, { token: owner.token })).status).toBe(404);
    expect((await api('POST', `/collections/join/${share.share_token}`, { token: member.token })).status).toBe(404);
  });

  it('answers 422 for an id with a NUL in it, naming the path parameter', async () => {
    const response = await api('DELETE', '/collections/abc%00', { token: owner.token });
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([{ loc: ['path', 'id'], msg: expect.any(String), type: 'invalid_format' }]);
  });

  it('answers 404 for ids that are not UUIDs', async () => {
    for (const id of ['nope', '123', `${randomUUID()}x`]) {
      const response = await api('DELETE', `/collections/${id}`, { token: owner.token });
      expect(response.status).toBe(404);
      expect(response.body.code).toBe('not_found');
    }
  });
});

describe('GET /collections/{id}/documents', () => {
  it('is an empty list before anything is ingested', async () => {
    const { body: collection } = await api('POST', '/collections/', { token: owner.token, body: { name: 'Empty' } });
    expect(await api('GET', `/collections/${collection.id}/documents`, { token: owner.token })).toMatchObject({
      status: 200,
      body: [],
    });
  });
});
