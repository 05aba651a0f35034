import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, db, fileForm, makeAdmin, signUp, type TestUser } from '../support/client.ts';
import { collectionWithLink } from '../support/fixtures.ts';

// API keys: made, listed, used and revoked through the real worker; the access matrix runs every
// endpoint against every kind of key, and this file the keys' own life.
let owner: TestUser;
let stranger: TestUser;

const withKey = (key: string) => ({ headers: { 'X-API-Key': key } });

/** POST /ingest/ of a small text file, with an API key. */
function uploadWithKey(key: string, collectionId: string, text: string) {
  return api('POST', `/ingest/?collection_id=${collectionId}`, { ...withKey(key), body: fileForm('notes.txt', text) });
}

async function createKey(user: TestUser, body: Record<string, unknown>) {
  return api('POST', '/keys/', { token: user.token, body: { name: 'a key', scopes: ['collections:read'], ...body } });
}

beforeAll(async () => {
  [owner, stranger] = await Promise.all([signUp('keys-owner'), signUp('keys-stranger')]);
});

describe('API keys', () => {
  it('shows the key once, keeps only its SHA-256 and a 12-character prefix, and lists keys without either', async () => {
    const created = await createKey(owner, { name: 'nightly sync', scopes: ['ingest', 'query', 'ingest'] });
    expect(created.status).toBe(200);
    const { key, ...row } = created.body;
    expect(key).toMatch(/^rag_[A-Za-z0-9_-]{43}$/);
    expect(row).toMatchObject({
      name: 'nightly sync',
      prefix: key.slice(0, 12),
      scopes: ['ingest', 'query'],
      collection_id: null,
      expires_at: null,
      last_used_at: null,
    });

    const [stored] = await db()`select * from api_keys where id = ${row.id}`;
    expect(stored?.key_hash).toBe(createHash('sha256').update(key).digest('hex'));
    expect(JSON.stringify(stored)).not.toContain(key.slice(12));

    const listed = await api('GET', '/keys/', { token: owner.token });
    expect(listed.status).toBe(200);
    const mine = listed.body.find((entry: { id: string }) => entry.id === row.id);
    expect(Object.keys(mine ?? {}).sort()).toEqual(
      ['collection_id', 'created_at', 'expires_at', 'id', 'last_used_at', 'name', 'prefix', 'scopes'].sort(),
    );
    expect(JSON.stringify(listed.body)).not.toContain(key.slice(12));
    // Another user's list does not have it.
    expect((await api('GET', '/keys/', { token: stranger.token })).body.map((entry: { id: string }) => entry.id)).not.toContain(
      row.id,
    );
  });

  it('authenticates as its owner, and marks last_used_at at most once a minute', async () => {
    const collection = await api('POST', '/collections/', { token: owner.token, body: { name: 'Seen by a key' } });
    const { body } = await createKey(owner, { scopes: ['collections:read'] });
    const asKey = await api('GET', '/collections/', withKey(body.key));
    const asOwner = await api('GET', '/collections/', { token: owner.token });
    expect(asKey.status).toBe(200);
    expect(asKey.body).toEqual(asOwner.body);
    expect(asKey.body.map((c: { id: string }) => c.id)).toContain(collection.body.id);

    // Written after the response: poll for it.
    let lastUsed: string | null = null;
    for (let i = 0; i < 50 && !lastUsed; i++) {
      const listed = await api('GET', '/keys/', { token: owner.token });
      lastUsed = listed.body.find((entry) => entry.id === body.id)?.last_used_at ?? null;
      if (!lastUsed) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(lastUsed).not.toBeNull();
    await api('GET', '/collections/', withKey(body.key));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const again = await api('GET', '/keys/', { token: owner.token });
    expect(again.body.find((entry) => entry.id === body.id)?.last_used_at).toBe(lastUsed);
  });

  it('loses what its owner loses, at once: a member removed from the collection', async () => {
    const { collection, link } = await collectionWithLink(owner, 'Shared with a key', 'ingest');
    const member = await signUp('keys-member');
    expect((await api('POST', `/collections/join/${link.share_token}`, { token: member.token })).status).toBe(200);
    const { body } = await createKey(member, { scopes: ['ingest', 'collections:read'], collection_id: collection.id });

    const before = await api('GET', `/collections/${collection.id}/documents`, withKey(body.key));
    expect(before.status).toBe(200);
    expect((await api('DELETE', `/collections/${collection.id}/members/${member.id}`, { token: owner.token })).status).toBe(200);
    const after = await api('GET', `/collections/${collection.id}/documents`, withKey(body.key));
    expect(after.status).toBe(403);
    expect((await uploadWithKey(body.key, collection.id, 'After removal.')).status).toBe(403);
  });

  it('never carries operator rights, and cannot manage keys or webhooks', async () => {
    const admin = await makeAdmin(await signUp('keys-admin'));
    const collection = await api('POST', '/collections/', { token: admin.token, body: { name: 'Admin’s' } });
    const { body } = await createKey(admin, { scopes: ['query', 'ingest', 'collections:read', 'collections:write'] });
    expect((await api('GET', `/collections/${collection.body.id}/config`, { token: admin.token })).status).toBe(200);
    const config = await api('GET', `/collections/${collection.body.id}/config`, withKey(body.key));
    expect(config.status).toBe(403);
    expect(config.body.detail).toBe('API keys cannot do this; use a bearer token');
    for (const [method, path] of [
      ['POST', '/keys/'],
      ['GET', '/keys/'],
      ['DELETE', `/keys/${body.id}`],
      ['GET', '/webhooks/'],
    ] as const) {
      const response = await api(method, path, {
        ...withKey(body.key),
        body: method === 'POST' ? { name: 'x', scopes: ['query'] } : undefined,
      });
      expect(response.status, `${method} ${path}`).toBe(403);
    }
  });

  it('says which scope is missing', async () => {
    const { body } = await createKey(owner, { scopes: ['query'] });
    const refused = await api('GET', '/collections/', withKey(body.key));
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'forbidden', detail: 'This API key does not have the collections:read scope' });
  });

  it('refuses a restriction to a collection the owner cannot use (403) or that does not exist (404)', async () => {
    const theirs = await api('POST', '/collections/', { token: stranger.token, body: { name: 'Not yours' } });
    expect((await createKey(owner, { collection_id: theirs.body.id })).status).toBe(403);
    expect((await createKey(owner, { collection_id: '00000000-0000-4000-8000-000000000000' })).status).toBe(404);
    expect((await createKey(owner, { collection_id: 'not-a-uuid' })).status).toBe(404);
  });

  it('validates the request: name, scopes, expiry, unknown fields', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: '' }, 'name'],
      [{ name: 'x'.repeat(101) }, 'name'],
      [{ scopes: [] }, 'scopes'],
      [{ scopes: ['admin'] }, 'scopes'],
      [{ expires_at: new Date(Date.now() - 60_000).toISOString() }, 'expires_at'],
      [{ expires_at: 'tomorrow' }, 'expires_at'],
      [{ owner: 'someone else' }, ''],
    ];
    for (const [body, field] of cases) {
      const response = await createKey(owner, body);
      expect(response.status, JSON.stringify(body)).toBe(422);
      if (field) expect(JSON.stringify(response.body.detail), JSON.stringify(body)).toContain(field);
    }
  });

  it('is refused once revoked (401 API key revoked), and only its owner can revoke it', async () => {
    const { body } = await createKey(owner, {});
    expect((await api('DELETE', `/keys/${body.id}`, { token: stranger.token })).status).toBe(404);
    expect((await api('GET', '/collections/', withKey(body.key))).status).toBe(200);
    const revoked = await api('DELETE', `/keys/${body.id}`, { token: owner.token });
    expect(revoked).toMatchObject({ status: 200, body: { revoked: body.id } });
    const refused = await api('GET', '/collections/', withKey(body.key));
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ code: 'api_key_revoked', detail: 'API key revoked' });
    expect(refused.headers.get('www-authenticate')).toBe('Bearer');
    expect((await api('DELETE', `/keys/${body.id}`, { token: owner.token })).status).toBe(404);
    expect((await api('GET', '/keys/', { token: owner.token })).body.map((k: { id: string }) => k.id)).not.toContain(body.id);
  });

  it('is refused once expired (401 API key expired)', async () => {
    const { body } = await createKey(owner, { expires_at: new Date(Date.now() + 1500).toISOString() });
    expect((await api('GET', '/collections/', withKey(body.key))).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const refused = await api('GET', '/collections/', withKey(body.key));
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ code: 'api_key_expired', detail: 'API key expired' });
  });

  it('refuses a bearer token and a key together, whichever is valid (401)', async () => {
    const { body } = await createKey(owner, {});
    const both = await api('GET', '/collections/', { token: owner.token, headers: { 'X-API-Key': body.key } });
    expect(both.status).toBe(401);
    expect(both.body).toMatchObject({
      code: 'ambiguous_credentials',
      detail: 'Send either a bearer token or an API key, not both',
    });
  });

  it('goes with the collection it is restricted to', async () => {
    const collection = await api('POST', '/collections/', { token: owner.token, body: { name: 'Short-lived' } });
    const { body } = await createKey(owner, { collection_id: collection.body.id });
    expect((await api('GET', `/collections/${collection.body.id}/documents`, withKey(body.key))).status).toBe(200);
    expect((await api('DELETE', `/collections/${collection.body.id}`, { token: owner.token })).status).toBe(200);
    // Never a key to everything: the restriction cannot be lifted by its collection going away.
    const refused = await api('GET', '/collections/', withKey(body.key));
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('invalid_api_key');
  });

  it('uploads and polls its own jobs like its owner', async () => {
    const collection = await api('POST', '/collections/', { token: owner.token, body: { name: 'Key uploads' } });
    const { body } = await createKey(owner, { scopes: ['ingest'], collection_id: collection.body.id });
    const uploaded = await uploadWithKey(body.key, collection.body.id, 'Keys upload files too.');
    expect(uploaded.status).toBe(200);
    const { job_id } = uploaded.body;
    // The job is the owner's: the owner's token reads it, and so does the key.
    expect((await api('GET', `/ingest/jobs/${job_id}`, { token: owner.token })).status).toBe(200);
    expect((await api('GET', `/ingest/jobs/${job_id}`, withKey(body.key))).status).toBe(200);
    // Someone else's bearer token does not see it.
    expect((await api('GET', `/ingest/jobs/${job_id}`, { token: stranger.token })).status).toBe(404);
  });
});

describe('how many keys one user may hold', () => {
  const MAX = 50; // MAX_API_KEYS_PER_USER

  it('is 50 active keys: past it 409, concurrent creations included; a revoked or expired key frees its place', async () => {
    const holder = await signUp('keys-holder');
    const create = (body: Record<string, unknown> = {}) => createKey(holder, body);
    // One with an expiry, and the rest up to one below the cap, ten at a time.
    const expiring = await create({ expires_at: new Date(Date.now() + 86_400_000).toISOString() });
    expect(expiring.status).toBe(200);
    for (let made = 1; made < MAX - 1; made += 10) {
      const batch = await Promise.all(Array.from({ length: Math.min(10, MAX - 1 - made) }, () => create()));
      expect(batch.map((response) => response.status)).toEqual(batch.map(() => 200));
    }
    // At 49, five at once: exactly one gets the last place.
    const racing = await Promise.all(Array.from({ length: 5 }, () => create()));
    expect(racing.map((response) => response.status).sort()).toEqual([200, 409, 409, 409, 409]);
    const refused = racing.find((response) => response.status === 409);
    expect(refused?.body).toMatchObject({
      code: 'conflict',
      detail: expect.stringMatching(/^You already hold 50 active API keys, the most one user may hold: revoke one/),
    });
    // Another user is not affected.
    expect((await createKey(stranger, {})).status).toBe(200);

    // The key with an expiry reaches it (its time moved, rather than waited for), and frees its place.
    await db()`update api_keys set expires_at = now() - interval '1 second' where id = ${expiring.body.id}`;
    expect((await create()).status).toBe(200);
    expect((await create()).status).toBe(409);

    const listed = await api('GET', '/keys/', { token: holder.token });
    expect(listed.body).toHaveLength(MAX + 1); // the expired one stays listed until revoked
    const active = listed.body.find((key: { id: string }) => key.id !== expiring.body.id);
    const revoked = await api('DELETE', `/keys/${active?.id}`, { token: holder.token });
    expect(revoked.status).toBe(200);
    expect((await create()).status).toBe(200);
    expect((await create()).status).toBe(409);
    const [held] = await db()<{ active: number }[]>`
      select count(*)::int as active from api_keys
       where user_id = ${holder.id} and revoked_at is null and (expires_at is null or expires_at > now())`;
    expect(held?.active).toBe(MAX);
  });
});
