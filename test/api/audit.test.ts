import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type ApiResponse,
  api,
  db,
  type Method,
  makeAdmin,
  type Schema,
  signUp,
  stack,
  type TestUser,
} from '../support/client.ts';
import { documentOfJob, ingestFile } from '../support/ingest.ts';
import { waitForSync } from '../support/sources.ts';

/**
 * The audit log (issue 25) against the real workers: every audited action writes one entry, named by the
 * request's X-Request-Id, with its actor, key, client address, target and a diff that holds no secret; who reads
 * which entries through GET /audit; no API path changes one; and the ingest worker's cron removes old ones.
 */

type Entry = Schema<'AuditEntry'>;

/** What every audited request sends as its client's address (Cloudflare sets CF-Connecting-IP; here the test does). */
const ADDRESS = '203.0.113.7';

let owner: TestUser;
let member: TestUser;
let admin: TestUser;

beforeAll(async () => {
  [owner, member, admin] = await Promise.all([
    signUp('audit-owner'),
    signUp('audit-member'),
    signUp('audit-admin').then(makeAdmin),
  ]);
});

type Credential = TestUser | { key: string };

/** One API call from ADDRESS, with a bearer token or an API key. */
function call<M extends Method, P extends string>(method: M, path: P, as: Credential, body?: unknown) {
  const headers: Record<string, string> = { 'CF-Connecting-IP': ADDRESS };
  if ('key' in as) headers['X-API-Key'] = as.key;
  return api(method, path, { token: 'token' in as ? as.token : undefined, body, headers });
}

/** The entries the request wrote, read from the table itself. */
async function entriesOf(response: ApiResponse): Promise<Entry[]> {
  const requestId = response.headers.get('x-request-id');
  expect(requestId).toBeTruthy();
  return db()<Entry[]>`
    select id, created_at, actor_id, api_key_id, request_id, client_address, action, target_type, target_id,
           collection_id, diff
      from audit_log where request_id = ${requestId as string}`;
}

/**
 * The request succeeded and wrote exactly one entry with `expected` (the actor, the request, the address checked
 * here); none of `secrets` appears anywhere in it.
 */
async function theEntry(
  response: ApiResponse,
  expected: Partial<Entry> & Pick<Entry, 'action' | 'actor_id'>,
  secrets: string[] = [],
  status = 200,
): Promise<Entry> {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  const entries = await entriesOf(response);
  expect(entries).toHaveLength(1);
  const entry = entries[0] as Entry;
  expect(entry).toMatchObject({
    api_key_id: null,
    collection_id: null,
    request_id: response.headers.get('x-request-id'),
    client_address: ADDRESS,
    ...expected,
  });
  const written = JSON.stringify(entry);
  for (const secret of secrets) expect(written).not.toContain(secret);
  return entry;
}

async function newCollection(user: TestUser, name = 'Audited'): Promise<string> {
  const created = await call('POST', '/collections/', user, { name });
  expect(created.status).toBe(200);
  return (created.body as { id: string }).id;
}

describe('every audited action writes its entry', () => {
  it('API keys: created (never the key) and revoked', async () => {
    const collectionId = await newCollection(owner);
    const created = await call('POST', '/keys/', owner, { name: 'nightly', scopes: ['ingest'], collection_id: collectionId });
    const key = created.body as Schema<'CreatedApiKey'>;
    await theEntry(
      created,
      {
        action: 'api_key.created',
        actor_id: owner.id,
        target_type: 'api_key',
        target_id: key.id,
        collection_id: collectionId,
        diff: { name: 'nightly', scopes: ['ingest'], collection_id: collectionId, expires_at: null },
      },
      [key.key, key.prefix],
    );
    const revoked = await call('DELETE', `/keys/${key.id}`, owner);
    await theEntry(revoked, { action: 'api_key.revoked', actor_id: owner.id, target_type: 'api_key', target_id: key.id });
    // A refusal writes nothing.
    const again = await call('DELETE', `/keys/${key.id}`, owner);
    expect(again.status).toBe(404);
    expect(await entriesOf(again)).toEqual([]);
  });

  it('collections: created, config changed, re-chunked and deleted', async () => {
    const created = await call('POST', '/collections/', owner, { name: 'Ledger' });
    const collectionId = (created.body as { id: string }).id;
    const target = { target_type: 'collection' as const, target_id: collectionId, collection_id: collectionId };
    await theEntry(created, { action: 'collection.created', actor_id: owner.id, ...target, diff: { name: 'Ledger' } });

    const config = await call('PUT', `/collections/${collectionId}/config`, admin, {
      chunk_size: 500,
      retrieval_strategy: 'mmr',
    });
    await theEntry(config, {
      action: 'collection.config_changed',
      actor_id: admin.id,
      ...target,
      diff: { chunk_size: { from: 1000, to: 500 }, retrieval_strategy: { from: 'similarity', to: 'mmr' } },
    });

    const rechunk = await call('POST', `/collections/${collectionId}/rechunk`, admin);
    await theEntry(rechunk, {
      action: 'collection.rechunked',
      actor_id: admin.id,
      ...target,
      diff: { chunk_size: 500, documents: 0 },
    });

    const deleted = await call('DELETE', `/collections/${collectionId}`, owner);
    await theEntry(deleted, { action: 'collection.deleted', actor_id: owner.id, ...target, diff: { name: 'Ledger' } });
  });

  it('sharing: a link created (never its token) and revoked, a join, a member removed', async () => {
    const collectionId = await newCollection(owner);
    const created = await call('POST', `/collections/${collectionId}/shares`, owner, { permission: 'ingest', max_uses: 5 });
    const share = created.body as Schema<'Share'>;
    const shareTarget = { target_type: 'share' as const, target_id: share.id, collection_id: collectionId };
    await theEntry(
      created,
      {
        action: 'share.created',
        actor_id: owner.id,
        ...shareTarget,
        diff: { permission: 'ingest', expires_at: null, max_uses: 5 },
      },
      [share.share_token as string, share.token_prefix],
    );

    const joined = await call('POST', `/collections/join/${share.share_token}`, member);
    await theEntry(joined, { action: 'share.joined', actor_id: member.id, ...shareTarget, diff: { permission: 'ingest' } }, [
      share.share_token as string,
    ]);
    // Already a member: nothing changed, nothing recorded.
    const rejoined = await call('POST', `/collections/join/${share.share_token}`, member);
    expect(rejoined.status).toBe(200);
    expect(await entriesOf(rejoined)).toEqual([]);

    const removed = await call('DELETE', `/collections/${collectionId}/members/${member.id}`, owner);
    await theEntry(removed, {
      action: 'member.removed',
      actor_id: owner.id,
      target_type: 'user',
      target_id: member.id,
      collection_id: collectionId,
    });

    const revoked = await call('DELETE', `/collections/${collectionId}/shares/${share.id}`, owner);
    await theEntry(revoked, { action: 'share.revoked', actor_id: owner.id, ...shareTarget });
  });

  it('webhooks: created, changed, secret rotated, deleted; never the secret, the address by its origin', async () => {
    const origin = new URL(stack.receiverUrl).origin;
    const created = await call('POST', '/webhooks/', owner, {
      url: `${stack.receiverUrl}/hooks/T0001/s3cr3t-path?token=s3cr3t-query`,
      events: ['ingest.failed'],
    });
    const hook = created.body as Schema<'CreatedWebhook'>;
    const target = { target_type: 'webhook' as const, target_id: hook.id };
    const secrets = [hook.secret, 's3cr3t-path', 's3cr3t-query'];
    await theEntry(
      created,
      {
        action: 'webhook.created',
        actor_id: owner.id,
        ...target,
        diff: { url_origin: origin, events: ['ingest.failed'], collection_id: null },
      },
      secrets,
    );

    const changed = await call('PATCH', `/webhooks/${hook.id}`, owner, {
      url: `${stack.receiverUrl}/hooks/T0001/an0ther-path`,
      active: false,
    });
    await theEntry(
      changed,
      {
        action: 'webhook.updated',
        actor_id: owner.id,
        ...target,
        diff: { active: { from: true, to: false }, url_changed: true },
      },
      [...secrets, 'an0ther-path'],
    );

    const rotated = await call('POST', `/webhooks/${hook.id}/rotate-secret`, owner);
    const rotatedSecret = (rotated.body as Schema<'CreatedWebhook'>).secret;
    await theEntry(rotated, { action: 'webhook.secret_rotated', actor_id: owner.id, ...target, diff: {} }, [
      ...secrets,
      rotatedSecret,
    ]);

    const deleted = await call('DELETE', `/webhooks/${hook.id}`, owner);
    await theEntry(
      deleted,
      { action: 'webhook.deleted', actor_id: owner.id, ...target, diff: { url_origin: origin, events: ['ingest.failed'] } },
      [...secrets, rotatedSecret],
    );
  });

  it('sources added and removed, and documents deleted, through an API key: the entry names the key', async () => {
    const collectionId = await newCollection(owner);
    const made = await call('POST', '/keys/', owner, { name: 'sync', scopes: ['ingest'] });
    const key = made.body as Schema<'CreatedApiKey'>;
    const viaKey = { key: key.key };

    const url = `${stack.pagesUrl}/article.html`;
    const added = await call('POST', '/sources/', viaKey, { kind: 'url', url, collection_id: collectionId });
    const source = added.body as Schema<'WebSource'>;
    const sourceTarget = { target_type: 'source' as const, target_id: source.id, collection_id: collectionId };
    await theEntry(
      added,
      {
        action: 'source.created',
        actor_id: owner.id,
        api_key_id: key.id,
        ...sourceTarget,
        diff: { kind: 'url', url: source.url, schedule: null },
      },
      [key.key],
      201,
    );
    await waitForSync(owner.token, source.id);
    const removed = await call('DELETE', `/sources/${source.id}`, viaKey);
    await theEntry(
      removed,
      {
        action: 'source.removed',
        actor_id: owner.id,
        api_key_id: key.id,
        ...sourceTarget,
        diff: { kind: 'url', url: source.url, documents_removed: 1 },
      },
      [key.key],
    );

    const job = await ingestFile(owner.token, 'ledger.txt', collectionId, 'The ledger of the harbour dues for 1911.\n');
    const documentId = (await documentOfJob(job.job_id)) as string;
    const deleted = await call('DELETE', `/collections/${collectionId}/documents/${documentId}`, viaKey);
    await theEntry(deleted, {
      action: 'document.deleted',
      actor_id: owner.id,
      api_key_id: key.id,
      target_type: 'document',
      target_id: documentId,
      collection_id: collectionId,
      diff: { name: 'ledger.txt' },
    });

    const personal = await ingestFile(owner.token, 'diary.txt', undefined, 'A diary entry about the harbour.\n');
    const personalId = (await documentOfJob(personal.job_id)) as string;
    const deletedPersonal = await call('DELETE', `/ingest/documents/${personalId}`, owner);
    await theEntry(deletedPersonal, {
      action: 'document.deleted',
      actor_id: owner.id,
      target_type: 'document',
      target_id: personalId,
      collection_id: null,
      diff: { name: 'diary.txt' },
    });
  });
});

describe('GET /audit: who reads which entries', () => {
  // Users of this block's own: each reads exactly the entries made here.
  let reader: TestUser;
  let joiner: TestUser;
  let outsider: TestUser;
  let collectionId: string;
  let deletedCollection: string;
  let startedAt: string;
  const read = (path: string, as: Credential) => call('GET', path as '/audit', as);
  const actionsOf = (response: ApiResponse) => (response.body as Entry[]).map((entry) => entry.action);

  beforeAll(async () => {
    startedAt = new Date(Date.now() - 1000).toISOString();
    [reader, joiner, outsider] = await Promise.all([signUp('reader-owner'), signUp('reader-member'), signUp('reader-stranger')]);
    collectionId = await newCollection(reader, 'Read me');
    const share = await call('POST', `/collections/${collectionId}/shares`, reader, { permission: 'query' });
    const token = (share.body as Schema<'Share'>).share_token as string;
    expect((await call('POST', `/collections/join/${token}`, joiner)).status).toBe(200);
    expect((await call('POST', '/keys/', joiner, { name: 'mine', scopes: ['query'] })).status).toBe(200);
    deletedCollection = await newCollection(reader, 'Gone');
    expect((await call('DELETE', `/collections/${deletedCollection}`, reader)).status).toBe(200);
  });

  it('an owner reads their collection’s entries, whoever made them, newest first', async () => {
    const response = await read(`/audit?collection_id=${collectionId}`, reader);
    expect(response.status).toBe(200);
    expect(actionsOf(response)).toEqual(['share.joined', 'share.created', 'collection.created']);
    const [joined] = response.body as Entry[];
    expect(joined?.actor_id).toBe(joiner.id);
  });

  it('a user reads the entries they made, and no one else’s', async () => {
    const mine = await read('/audit', joiner);
    expect(actionsOf(mine)).toEqual(['api_key.created', 'share.joined']);
    expect((mine.body as Entry[]).every((entry) => entry.actor_id === joiner.id)).toBe(true);
    const owners = await read('/audit', reader);
    expect(actionsOf(owners)).toEqual(['collection.deleted', 'collection.created', 'share.created', 'collection.created']);
    expect(await read('/audit', outsider)).toMatchObject({ status: 200, body: [] });
  });

  it('a member, a stranger and an API key are refused a collection’s entries; a missing collection is 404', async () => {
    expect((await read(`/audit?collection_id=${collectionId}`, joiner)).status).toBe(403);
    expect((await read(`/audit?collection_id=${collectionId}`, outsider)).status).toBe(403);
    expect((await read(`/audit?collection_id=${randomUUID()}`, reader)).status).toBe(404);
    expect((await read('/audit?collection_id=not-a-uuid', reader)).status).toBe(404);
    // A deleted collection is gone for its owner too; their own entries still tell of it.
    expect((await read(`/audit?collection_id=${deletedCollection}`, reader)).status).toBe(404);
    const key = await call('POST', '/keys/', outsider, { name: 'reader', scopes: ['query', 'ingest', 'collections:read'] });
    const byKey = await read('/audit', { key: (key.body as Schema<'CreatedApiKey'>).key });
    expect(byKey).toMatchObject({ status: 403, body: { code: 'forbidden' } });
  });

  it('an admin reads every entry (a deleted collection’s among them), and any collection’s', async () => {
    // Other test files write entries meanwhile: page through everything since this block began.
    const everything: Entry[] = [];
    for (let offset = 0; ; offset += 200) {
      const page = await read(`/audit?since=${encodeURIComponent(startedAt)}&limit=200&offset=${offset}`, admin);
      expect(page.status).toBe(200);
      everything.push(...(page.body as Entry[]));
      if ((page.body as Entry[]).length < 200) break;
    }
    const actors = new Set(everything.map((entry) => entry.actor_id));
    expect(actors).toContain(reader.id);
    expect(actors).toContain(joiner.id);
    expect(actors).toContain(outsider.id);
    expect(everything).toContainEqual(expect.objectContaining({ action: 'collection.deleted', target_id: deletedCollection }));
    expect((await read(`/audit?collection_id=${deletedCollection}`, admin)).status).toBe(404);
    expect(actionsOf(await read(`/audit?collection_id=${collectionId}`, admin))).toHaveLength(3);
  });

  it('filters by action and time, and pages', async () => {
    const created = await read('/audit?action=collection.created', reader);
    expect(actionsOf(created)).toEqual(['collection.created', 'collection.created']);
    const [newest, oldest] = created.body as Entry[];
    // `since` inclusive, `until` exclusive.
    const since = await read(`/audit?since=${encodeURIComponent(newest?.created_at as string)}`, reader);
    expect((since.body as Entry[]).map((entry) => entry.id)).toContain(newest?.id);
    expect((since.body as Entry[]).map((entry) => entry.id)).not.toContain(oldest?.id);
    const until = await read(`/audit?until=${encodeURIComponent(oldest?.created_at as string)}`, reader);
    expect(until).toMatchObject({ status: 200, body: [] });
    const first = await read('/audit?limit=1', reader);
    const second = await read('/audit?limit=1&offset=1', reader);
    expect(actionsOf(first)).toEqual(['collection.deleted']);
    expect(actionsOf(second)).toEqual(['collection.created']);
    expect((await read('/audit?action=everything.deleted', reader)).status).toBe(422);
    expect((await read('/audit?since=yesterday', reader)).status).toBe(422);
  });
});

describe('entries cannot be changed', () => {
  /** Every entry, as it stands. */
  const fingerprint = async () => {
    const [row] = await db()<{ fingerprint: string | null }[]>`
      select md5(string_agg(concat_ws(',', id, created_at, actor_id, action, target_id, diff::text), ';' order by id))
             as fingerprint
        from audit_log where actor_id = ${owner.id}`;
    return row?.fingerprint;
  };

  it('no API path changes or deletes an entry', async () => {
    const before = await fingerprint();
    expect(before).toBeTruthy();
    const [entry] = (await call('GET', '/audit', owner)).body as Entry[];
    const id = entry?.id as string;
    // The description has no other operation on the log.
    const description = await api('GET', '/openapi.json');
    const described = description.body.paths as Record<string, object>;
    expect(Object.keys(described).filter((path) => path.startsWith('/audit'))).toEqual(['/audit']);
    expect(Object.keys(described['/audit'] ?? {})).toEqual(['get']);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      for (const path of ['/audit', `/audit/${id}`, `/audit?collection_id=${entry?.collection_id}`]) {
        for (const as of [owner, admin]) {
          const response = await api(method, path as '/audit', { token: as.token, body: { action: 'nothing' } });
          expect(response.status, `${method} ${path}`).toBe(404);
        }
      }
    }
    expect(await fingerprint()).toBe(before);
  });

  it('the table refuses an UPDATE, even from the service', async () => {
    await expect(db()`update audit_log set action = 'collection.created' where actor_id = ${owner.id}`).rejects.toThrow(
      /append-only/,
    );
  });
});

describe('retention', () => {
  it('the ingest worker’s cron removes entries older than AUDIT_RETENTION_DAYS (365 by default), and no others', async () => {
    const user = await signUp('audit-retention');
    const created = await Promise.all([1, 2, 3].map(() => call('POST', '/collections/', user, { name: 'Old' })));
    const [old, kept, recent] = await Promise.all(created.map(async (response) => (await entriesOf(response))[0] as Entry));
    // Entries are append-only; the test alone moves two of them back in time.
    await db().begin(async (tx) => {
      await tx`alter table audit_log disable trigger audit_log_append_only`;
      await tx`update audit_log set created_at = now() - interval '366 days' where id = ${old?.id as string}`;
      await tx`update audit_log set created_at = now() - interval '364 days' where id = ${kept?.id as string}`;
      await tx`alter table audit_log enable trigger audit_log_append_only`;
    });
    const cron = await fetch(`${stack.ingestUrl}/__scheduled?cron=${encodeURIComponent('*/15 * * * *')}`);
    expect(cron.status).toBe(200);
    await cron.text();
    // The sweep runs after the answer (waitUntil).
    const deadline = Date.now() + 20_000;
    const left = async () =>
      (await db()<{ id: string }[]>`select id from audit_log where actor_id = ${user.id}`).map((row) => row.id).sort();
    while ((await left()).length === 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await left()).toEqual([kept?.id, recent?.id].sort());
  });
});
