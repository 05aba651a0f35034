import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAILY_INGEST_CHUNKS } from '#core/limits.ts';
import { CRAWLER_TOKEN } from '#core/sources/limits.ts';
import { verifyWebhook } from '../../client/webhook-verify.ts';
import { api, db, signUp, stack, type TestUser } from '../support/client.ts';
import { type SitePage, sitemapXml, startSite, type TestSite } from '../support/site-server.ts';
import { addSource, pagesOf, type Source, syncNow, untilIngested, waitForSync } from '../support/sources.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * Sources end to end: the real API and ingest worker crawl a site served on loopback (two origins the
 * workers trust for URL ingestion, stack.siteUrls), through the devstack's QStash, Postgres, Storage and
 * Vector. The site's log shows every request the crawler made, and so every one it did not.
 */
let owner: TestUser;
let site: TestSite;
let other: TestSite;
let receiver: WebhookReceiver;

beforeAll(async () => {
  owner = await signUp('sources');
  site = await startSite(stack.siteUrls[0]);
  other = await startSite(stack.siteUrls[1]);
  receiver = await startWebhookReceiver(stack.sourcesReceiverUrl);
});

afterAll(async () => {
  await site?.stop();
  await other?.stop();
  await receiver?.close();
});

async function collection(name = 'Sources') {
  const created = await api('POST', '/collections', { token: owner.token, body: { name } });
  expect(created.status).toBe(200);
  return created.body.id as string;
}

/** A page about one made-up thing, so that each page's text is its own. */
const page = (n: number | string, links: string[] = [], extra = ''): SitePage => ({
  title: `Page ${n}`,
  text: `This page describes the widget numbered ${n}, which the factory in town ${n} builds. ${extra}`,
  links,
});

describe('crawling a site', () => {
  it('finds pages through links and the sitemap, within the depth, page and pattern limits, and honours robots.txt', async () => {
    const base = '/d1';
    // Our group is the one that applies to us: another robot's is not ours to follow.
    site.robots(
      `User-agent: other-bot\nDisallow: /\n\nUser-agent: ${CRAWLER_TOKEN}\nDisallow: ${base}/private\nDisallow: ${base}/secret$\n`,
    );
    site.set(
      `${base}/`,
      page('home', [
        `${base}/a`,
        `${base}/b/`,
        `${base}/private/x`,
        `${base}/secret`,
        `${base}/skip/me`,
        `${other.url('/elsewhere')}`,
      ]),
    );
    site.set(`${base}/a`, page('a', [`${base}/a/deep`, `${base}/b#section`, `${base}/b?utm_source=mail`]));
    site.set(`${base}/b/`, page('b', [`${base}/a`]));
    site.set(`${base}/a/deep`, page('deep', [`${base}/a/deeper`]));
    site.set(`${base}/a/deeper`, page('deeper'));
    site.set(`${base}/private/x`, page('private'));
    site.set(`${base}/secret`, page('secret'));
    site.set(`${base}/skip/me`, page('skip'));
    site.set(`${base}/only-in-sitemap`, page('sitemap'));
    site.set(`${base}/sitemap.xml`, sitemapXml([site.url(`${base}/only-in-sitemap`)]));
    other.set('/elsewhere', page('elsewhere'));
    site.clear();
    other.clear();

    const id = await collection();
    const source = await addSource(owner.token, {
      kind: 'site',
      url: site.url(`${base}/`),
      collection_id: id,
      sitemap_url: site.url(`${base}/sitemap.xml`),
      max_depth: 2,
      exclude: [`${base}/skip/*`],
    });
    expect(source).toMatchObject({ kind: 'site', max_pages: 200, max_depth: 2, allowed_origins: [], schedule: null });
    expect(source.last_run?.status).toBe('running');
    const run = await waitForSync(owner.token, source.id);
    expect(run.status, JSON.stringify(run)).toBe('succeeded');
    // home, a, b, deep (depth 2), only-in-sitemap; private and secret found but skipped; deeper is depth 3.
    expect(run.counts, JSON.stringify(await pagesOf(owner.token, source.id))).toMatchObject({
      added: 5,
      changed: 0,
      unchanged: 0,
      failed: 0,
      skipped: 2,
    });

    const fetched = site.log.map((request) => request.path);
    expect(fetched).not.toContain(`${base}/private/x`);
    expect(fetched).not.toContain(`${base}/secret`);
    expect(fetched).not.toContain(`${base}/skip/me`);
    expect(fetched).not.toContain(`${base}/a/deeper`);
    expect(other.log).toEqual([]);
    // `/b/`, `/b#section` and `/b?utm_source=mail` are one page, fetched once.
    expect(fetched.filter((path) => path.startsWith(`${base}/b`))).toHaveLength(1);
    expect(site.requests('/robots.txt')).toHaveLength(1);
    expect(new Set(site.log.map((request) => request.userAgent))).toEqual(new Set([expect.stringContaining(CRAWLER_TOKEN)]));

    const listed = await pagesOf(owner.token, source.id);
    expect(
      listed
        .filter((p) => p.status === 'ok')
        .map((p) => new URL(p.url).pathname)
        .sort(),
    ).toEqual([`${base}`, `${base}/a`, `${base}/a/deep`, `${base}/b`, `${base}/only-in-sitemap`].sort());
    expect(listed.filter((p) => p.status === 'skipped')).toHaveLength(2);

    await untilIngested(owner.token);
    const documents = await api('GET', `/collections/${id}/documents`, { token: owner.token });
    expect(documents.status).toBe(200);
    const ours = documents.body.filter((doc) => doc.source_id === source.id);
    expect(ours).toHaveLength(5);
    const deep = ours.find((doc) => doc.name.endsWith('/a/deep'));
    expect(deep).toMatchObject({ title: 'Page deep', source_kind: 'url' });
    expect(deep?.last_fetched_at).toBeTruthy();
    expect(deep?.last_changed_at).toBeTruthy();
    expect(deep?.chunk_count).toBeGreaterThan(0);

    const search = await api('POST', '/query/search', {
      token: owner.token,
      body: { collection_id: id, question: 'Which factory builds the widget numbered deep?' },
    });
    expect(search.status).toBe(200);
    expect(search.body.sources[0]?.source).toBe(site.url(`${base}/a/deep`));
  });

  it('stops at max_pages, and follows another origin only when it is allowed', async () => {
    const base = '/d2';
    site.robots(null);
    const links = Array.from({ length: 12 }, (_, i) => `${base}/p${i}`);
    site.set(`${base}/`, page('start', [...links, other.url('/allowed')]));
    for (const [i, href] of links.entries()) site.set(href, page(`p${i}`));
    other.set('/allowed', page('allowed'));
    other.clear();
    const id = await collection();
    const source = await addSource(owner.token, {
      url: site.url(`${base}/`),
      collection_id: id,
      max_pages: 6,
      allowed_origins: [site.origin, other.origin],
    });
    const run = await waitForSync(owner.token, source.id);
    expect(run.status).toBe('succeeded');
    expect(run.counts.found).toBe(6);
    expect(run.counts.added).toBe(6);
    expect(source.allowed_origins).toEqual([site.origin, other.origin]);
    // The other origin's robots.txt was asked only if its page was within the six.
    expect(other.log.filter((r) => r.path !== '/robots.txt').length).toBeLessThanOrEqual(1);
    await untilIngested(owner.token);
  });
});

/** The user's ingest jobs, newest first. */
async function jobsOf(user: TestUser) {
  const response = await api('GET', '/ingest/jobs?limit=200', { token: user.token });
  expect(response.status).toBe(200);
  return response.body;
}

async function documentsOf(collectionId: string, sourceId: string) {
  const response = await api('GET', `/collections/${collectionId}/documents`, { token: owner.token });
  expect(response.status).toBe(200);
  return new Map(response.body.filter((doc) => doc.source_id === sourceId).map((doc) => [new URL(doc.name).pathname, doc]));
}

describe('syncing a site again', () => {
  it('asks conditionally, makes new versions of only the changed pages, and removes a page gone at two syncs in a row', async () => {
    const base = '/s1';
    site.robots(null);
    const links = Array.from({ length: 8 }, (_, i) => `${base}/p${i}`);
    site.set(`${base}/`, page('index', links));
    for (const [i, href] of links.entries()) site.set(href, page(`s${i}`));
    const id = await collection();
    const source = await addSource(owner.token, { url: site.url(`${base}/`), collection_id: id });
    const first = await waitForSync(owner.token, source.id);
    expect(first.counts).toMatchObject({ found: 9, added: 9, changed: 0, unchanged: 0, failed: 0 });
    await untilIngested(owner.token);
    const before = await documentsOf(id, source.id);
    expect(before.size).toBe(9);
    const jobsBefore = (await jobsOf(owner)).length;

    // Nothing changed: every page answers 304 to its validators, and nothing is stored, parsed or embedded.
    site.clear();
    const same = await syncNow(owner.token, source.id);
    expect(same).toMatchObject({ status: 'succeeded', trigger: 'manual' });
    expect(same.counts).toMatchObject({ found: 9, fetched: 9, added: 0, changed: 0, unchanged: 9, gone: 0, removed: 0 });
    const pageRequests = site.log.filter((r) => r.path.startsWith(base));
    expect(pageRequests).toHaveLength(9);
    expect(pageRequests.every((r) => r.ifNoneMatch !== null && r.ifModifiedSince !== null && r.status === 304)).toBe(true);
    expect((await jobsOf(owner)).length).toBe(jobsBefore);
    const touched = await documentsOf(id, source.id);
    expect([...touched.values()].map((doc) => doc.id).sort()).toEqual([...before.values()].map((doc) => doc.id).sort());
    const p0 = touched.get(`${base}/p0`);
    expect(Date.parse(p0?.last_fetched_at ?? '')).toBeGreaterThan(Date.parse(before.get(`${base}/p0`)?.last_fetched_at ?? ''));
    expect(p0?.last_changed_at).toBe(before.get(`${base}/p0`)?.last_changed_at);

    // Two pages change, one answers 404, and one is no longer linked.
    site.set(`${base}/p0`, page('s0', [], 'It was rebuilt in a new hall this winter.'));
    site.set(`${base}/p1`, page('s1', [], 'Its factory moved to the harbour.'));
    site.set(`${base}/p2`, { title: 'gone', status: 404 });
    site.set(
      `${base}/`,
      page(
        'index',
        links.filter((href) => href !== `${base}/p3`),
      ),
    );
    const changed = await syncNow(owner.token, source.id);
    expect(changed.status).toBe('succeeded');
    // The index changed too (a link fewer).
    expect(changed.counts).toMatchObject({ added: 0, changed: 3, unchanged: 4, gone: 2, removed: 0 });
    await untilIngested(owner.token);
    const after = await documentsOf(id, source.id);
    expect(after.size).toBe(9);
    for (const path of [`${base}/p0`, `${base}/p1`, base]) {
      expect(after.get(path)?.id, path).not.toBe(before.get(path)?.id);
      expect(after.get(path)?.last_changed_at).not.toBe(before.get(path)?.last_changed_at);
    }
    for (const path of [`${base}/p2`, `${base}/p3`, `${base}/p4`]) expect(after.get(path)?.id, path).toBe(before.get(path)?.id);
    // The new version is what a search finds; the old one is gone with its vectors.
    const search = await api('POST', '/query/search', {
      token: owner.token,
      body: { collection_id: id, question: 'Where did the factory of widget s1 move?' },
    });
    expect(search.body.sources?.[0]).toMatchObject({ source: site.url(`${base}/p1`), document_id: after.get(`${base}/p1`)?.id });
    expect(search.body.sources?.some((s) => s.document_id === before.get(`${base}/p1`)?.id)).toBe(false);

    // Gone at a second sync in a row: removed, and the run says which.
    const third = await syncNow(owner.token, source.id);
    expect(third.counts).toMatchObject({ changed: 0, gone: 2, removed: 2 });
    expect(third.errors.map((e) => new URL(e.url).pathname).sort()).toEqual([`${base}/p2`, `${base}/p3`]);
    expect(third.errors.find((e) => e.url.endsWith('/p3'))?.message).toMatch(/Removed: gone for 2 syncs in a row/);
    const last = await documentsOf(id, source.id);
    expect([...last.keys()].sort()).toEqual([base, ...links.filter((l) => !l.endsWith('p2') && !l.endsWith('p3'))].sort());
    const pages = await pagesOf(owner.token, source.id);
    expect(pages.map((p) => new URL(p.url).pathname)).not.toContain(`${base}/p3`);
    const runs = await api('GET', `/sources/${source.id}/runs`, { token: owner.token });
    expect(runs.body.map((run) => run.trigger)).toEqual(['manual', 'manual', 'manual', 'created']);
  });

  it('keeps a redirect within the allowed origins, refuses one off them or to a private address, and fails a run that reads nothing', async () => {
    const base = '/r1';
    site.robots(null);
    site.set(`${base}/`, page('start', [`${base}/moved`, `${base}/off`, `${base}/metadata`, `${base}/broken`]));
    site.set(`${base}/moved`, { title: 'moved', redirect: `${base}/new-home` });
    site.set(`${base}/new-home`, page('new home'));
    site.set(`${base}/off`, { title: 'off', redirect: other.url('/landing') });
    site.set(`${base}/metadata`, { title: 'metadata', redirect: 'http://169.254.169.254/latest/meta-data/' });
    site.set(`${base}/broken`, { title: 'broken', status: 500 });
    other.set('/landing', page('landing'));
    other.clear();
    const id = await collection();
    const source = await addSource(owner.token, { url: site.url(`${base}/`), collection_id: id });
    const run = await waitForSync(owner.token, source.id);
    expect(run.status).toBe('partial');
    expect(run.counts).toMatchObject({ added: 2, failed: 3 });
    const errors = Object.fromEntries(run.errors.map((e) => [new URL(e.url).pathname, e.message]));
    expect(errors[`${base}/off`]).toMatch(/redirected off the source’s allowed origins/);
    expect(errors[`${base}/metadata`]).toBe('The URL redirected to a private address');
    expect(errors[`${base}/broken`]).toMatch(/HTTP 500/);
    expect(other.log).toEqual([]);
    const pages = await pagesOf(owner.token, source.id);
    expect(pages.find((p) => p.url.endsWith('/new-home'))).toMatchObject({ status: 'ok', title: 'Page new home' });
    expect(pages.map((p) => p.url)).not.toContain(site.url(`${base}/moved`));

    site.set(`${base}/`, { title: 'down', status: 503 });
    const failed = await syncNow(owner.token, source.id);
    expect(failed).toMatchObject({ status: 'failed' });
    expect(failed.message).toMatch(/^Nothing could be read: The URL could not be reached \(HTTP 503\); nothing was removed$/);
    await untilIngested(owner.token);
    expect((await documentsOf(id, source.id)).size).toBe(2);
  });
});

/** What Cloudflare's cron does every 15 minutes. */
async function runCron() {
  const response = await fetch(`${stack.ingestUrl}/__scheduled?cron=${encodeURIComponent('*/15 * * * *')}`);
  expect(response.status).toBe(200);
  await response.text();
}

describe('schedules and webhooks', () => {
  it('syncs a due source from the cron, sends source.synced signed, and leaves a paused or undue one alone', async () => {
    const base = '/w1';
    site.robots(null);
    site.set(`${base}/`, page('scheduled'));
    const hook = await api('POST', '/webhooks', {
      token: owner.token,
      body: { url: receiver.url('/synced'), events: ['source.synced'] },
    });
    expect(hook.status).toBe(200);
    const id = await collection();
    const source = await addSource(owner.token, {
      kind: 'url',
      url: site.url(`${base}/`),
      collection_id: id,
      schedule: 'hourly',
    });
    expect(Date.parse(source.next_sync_at ?? '') - Date.now()).toBeGreaterThan(59 * 60_000);
    const first = await waitForSync(owner.token, source.id);
    const [delivered] = await receiver.waitForRequests('/synced', 1);
    const payload = JSON.parse(delivered?.body.toString() ?? '{}');
    expect(payload).toEqual({
      event: 'source.synced',
      run_id: first.id,
      source_id: source.id,
      collection_id: id,
      source: site.url(`${base}/`),
      status: 'succeeded',
      message: null,
      counts: { found: 1, fetched: 1, added: 1, changed: 0, unchanged: 0, failed: 0, skipped: 0, gone: 0, removed: 0 },
      occurred_at: first.finished_at,
    });
    const headers = new Headers(delivered?.headers);
    const verdict = await verifyWebhook(hook.body.secret ?? '', headers, delivered?.body ?? '', { add: () => true });
    expect(verdict.ok).toBe(true);

    // Another source, paused, due as well; and one not yet due.
    const paused = await addSource(owner.token, {
      kind: 'url',
      url: site.url(`${base}/`),
      collection_id: await collection(),
      schedule: 'daily',
    });
    await waitForSync(owner.token, paused.id);
    expect((await api('PATCH', `/sources/${paused.id}`, { token: owner.token, body: { paused: true } })).body).toMatchObject({
      paused: true,
      next_sync_at: null,
    });
    await db()`update sources set next_sync_at = now() - interval '1 minute' where id in (${source.id}, ${paused.id})`;
    await runCron();
    const scheduled = await waitForSync(owner.token, source.id, { after: first.id });
    expect(scheduled).toMatchObject({ trigger: 'schedule', status: 'succeeded' });
    expect(scheduled.counts).toMatchObject({ unchanged: 1, added: 0 });
    const [next] = await db()<{ next_sync_at: string }[]>`select next_sync_at from sources where id = ${source.id}`;
    expect(new Date(next?.next_sync_at ?? 0).getTime() - Date.now()).toBeGreaterThan(58 * 60_000);
    const pausedRuns = await api('GET', `/sources/${paused.id}/runs`, { token: owner.token });
    expect(pausedRuns.body).toHaveLength(1);
    await receiver.waitForRequests('/synced', 3);
    await api('DELETE', `/webhooks/${hook.body.id}`, { token: owner.token });
  });
});

describe('who may do what, and what is refused', () => {
  it('follows the collection: 403 without the ingest permission, 404 for what does not exist or is someone else’s personal source', async () => {
    site.set('/a1/', page('access'));
    const stranger = await signUp('stranger');
    const id = await collection();
    const shared = await addSource(owner.token, { kind: 'url', url: site.url('/a1/'), collection_id: id });
    const personal = await addSource(owner.token, { kind: 'url', url: site.url('/a1/') });
    await waitForSync(owner.token, shared.id);
    await waitForSync(owner.token, personal.id);
    for (const [method, path] of [
      ['GET', `/sources/${shared.id}`],
      ['PATCH', `/sources/${shared.id}`],
      ['POST', `/sources/${shared.id}/sync`],
      ['GET', `/sources/${shared.id}/runs`],
      ['GET', `/sources/${shared.id}/pages`],
      ['DELETE', `/sources/${shared.id}`],
      ['GET', `/sources?collection_id=${id}`],
    ] as const) {
      const response = await api(method, path, {
        token: stranger.token,
        body: method === 'PATCH' ? { paused: true } : undefined,
      });
      expect(response.status, `${method} ${path}`).toBe(403);
    }
    for (const path of [`/sources/${personal.id}`, `/sources/${crypto.randomUUID()}`, '/sources/not-an-id']) {
      expect((await api('GET', path, { token: stranger.token })).status, path).toBe(404);
    }
    expect(
      (await api('POST', '/sources', { token: stranger.token, body: { url: site.url('/a1/'), collection_id: id } })).status,
    ).toBe(403);
    expect((await api('GET', '/sources', { token: stranger.token })).body).toEqual([]);
    const mine = await api('GET', '/sources', { token: owner.token });
    expect(mine.body.map((s) => s.id)).toEqual(expect.arrayContaining([shared.id, personal.id]));
    const personalOnly = await api('GET', '/sources?collection_id=personal', { token: owner.token });
    expect(personalOnly.body.map((s) => s.id)).toContain(personal.id);
    expect(personalOnly.body.map((s) => s.id)).not.toContain(shared.id);
  });

  it('refuses bad input with 422 naming the field, and a private address as the start URL or an allowed origin', async () => {
    const bad = async (body: Record<string, unknown>, field: string, code?: string) => {
      const response = await api('POST', '/sources', { token: owner.token, body });
      expect(response.status, JSON.stringify(response.body)).toBe(422);
      if (code) expect(JSON.stringify(response.body.detail)).toContain(code);
      expect(JSON.stringify(response.body.detail)).toContain(field);
    };
    await bad({ url: 'http://169.254.169.254/latest' }, 'url', 'url_refused');
    await bad({ url: site.url('/'), allowed_origins: ['http://10.0.0.1'] }, 'allowed_origins.0', 'url_refused');
    await bad({ url: site.url('/'), max_pages: 2001 }, 'max_pages');
    await bad({ url: site.url('/'), schedule: 'minutely' }, 'schedule');
    await bad({ url: site.url('/'), kind: 'feed' }, 'kind');
    await bad({ url: site.url('/'), surprise: true }, 'surprise');
    const patch = await api('PATCH', `/sources/${crypto.randomUUID()}`, { token: owner.token, body: {} });
    expect(patch.status).toBe(422);
  });

  it('answers 409 to a second sync while one runs, and deleting a source takes its documents, vectors and files', async () => {
    const base = '/x1';
    site.set(`${base}/`, page('slow', [`${base}/a`]));
    site.set(`${base}/a`, { ...page('slow a'), delayMs: 1500 });
    const id = await collection();
    const source = await addSource(owner.token, { url: site.url(`${base}/`), collection_id: id });
    const again = await api('POST', `/sources/${source.id}/sync`, { token: owner.token });
    expect(again.status).toBe(409);
    await waitForSync(owner.token, source.id);
    await untilIngested(owner.token);
    const documents = await documentsOf(id, source.id);
    expect(documents.size).toBe(2);
    const removed = await api('DELETE', `/sources/${source.id}`, { token: owner.token });
    expect(removed.body).toEqual({ deleted: source.id, documents_removed: 2 });
    expect((await documentsOf(id, source.id)).size).toBe(0);
    const [left] = await db()<{ n: number }[]>`
      select count(*)::int as n from documents where id in ${db()([...documents.values()].map((doc) => doc.id))}`;
    expect(left?.n).toBe(0);
    expect((await api('GET', `/sources/${source.id}`, { token: owner.token })).status).toBe(404);
  });
});

describe('the API key a sync was started with', () => {
  it('goes to the jobs of the pages it adds, and to their usage; a sync started with a token passes none', async () => {
    const base = '/k1';
    site.robots(null);
    site.set(`${base}/`, page('keyed', [`${base}/a`]));
    site.set(`${base}/a`, page('keyed a'));
    const id = await collection('Keyed');
    const made = await api('POST', '/keys/', {
      token: owner.token,
      body: { name: 'crawler', scopes: ['ingest'], collection_id: id },
    });
    expect(made.status).toBe(200);
    const created = await api('POST', '/sources', {
      headers: { 'X-API-Key': made.body.key as string },
      body: { url: site.url(`${base}/`), collection_id: id },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const sourceId = (created.body as Source).id;
    expect((await waitForSync(owner.token, sourceId)).counts).toMatchObject({ added: 2 });
    await untilIngested(owner.token);
    const jobsOfSource = () => db()<{ id: string; api_key_id: string | null; path: string }[]>`
      select j.id, j.api_key_id, d.name as path from ingest_jobs j join documents d on d.id = j.document_id
       where d.source_id = ${sourceId} order by j.created_at`;
    const first = await jobsOfSource();
    expect(first.map((job) => job.api_key_id)).toEqual([made.body.id, made.body.id]);
    if (stack.apiVars.EMBEDDING_MODEL) {
      const usage = await db()<{ api_key_id: string | null }[]>`
        select distinct api_key_id from usage_events where job_id in ${db()(first.map((job) => job.id))}`;
      expect(usage).toEqual([{ api_key_id: made.body.id }]);
    }

    site.set(`${base}/a`, page('keyed a', [], 'It was repainted.'));
    expect((await syncNow(owner.token, sourceId)).counts).toMatchObject({ changed: 1 });
    await untilIngested(owner.token);
    const changed = (await jobsOfSource()).filter((job) => !first.some((earlier) => earlier.id === job.id));
    expect(changed.map((job) => [new URL(job.path).pathname, job.api_key_id])).toEqual([[`${base}/a`, null]]);
  });
});

describe('politeness and the quota', () => {
  it('waits the Crawl-delay between fetches from the site, with at most two at once', async () => {
    const base = '/c1';
    const links = Array.from({ length: 4 }, (_, i) => `${base}/p${i}`);
    site.robots(`User-agent: ${CRAWLER_TOKEN}\nCrawl-delay: 1\nDisallow: /nothing\n`);
    site.set(`${base}/`, page('delayed', links));
    for (const [i, href] of links.entries()) site.set(href, { ...page(`delayed ${i}`), delayMs: 300 });
    site.clear();
    const source = await addSource(owner.token, { url: site.url(`${base}/`), collection_id: await collection() });
    const run = await waitForSync(owner.token, source.id);
    expect(run.counts.added).toBe(5);
    // The crawler spaces its sends by 1 s; the site sees them as they arrive, each a little late by however busy the
    // machine is, so one gap may look shorter by that lateness, while the gaps together still span the delays.
    const starts = site.log.filter((r) => r.path.startsWith(base)).map((r) => r.at);
    const gaps = starts.slice(1).map((at, i) => at - (starts[i] as number));
    expect(gaps).toHaveLength(4);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(800);
    expect(((starts.at(-1) as number) - (starts[0] as number)) / gaps.length).toBeGreaterThanOrEqual(950);
    expect(site.mostAtOnce).toBeLessThanOrEqual(2);
    site.robots(null);
    await untilIngested(owner.token);
  });

  it('stops a sync at the daily quota, partial, removing nothing, and refuses another until it resets', async () => {
    const base = '/q1';
    const user = await signUp('sources-quota');
    const links = Array.from({ length: 6 }, (_, i) => `${base}/p${i}`);
    site.set(`${base}/`, page('quota', links));
    for (const [i, href] of links.entries()) site.set(href, { ...page(`quota ${i}`), delayMs: 400 });
    const created = await api('POST', '/collections', { token: user.token, body: { name: 'Quota' } });
    const source = await addSource(user.token, { url: site.url(`${base}/`), collection_id: created.body.id });
    // The quota runs out while the pages are fetched: what is left of the sync waits for the next.
    await new Promise((resolve) => setTimeout(resolve, 600));
    await db()`insert into ingest_usage (job_id, range_start, user_id, chunks)
               values (${crypto.randomUUID()}, 1, ${user.id}, ${DAILY_INGEST_CHUNKS})`;
    const run = await waitForSync(user.token, source.id);
    expect(run).toMatchObject({ status: 'partial', message: expect.stringMatching(/daily ingestion quota is used up/) });
    expect(run.counts.added).toBeLessThan(7);
    expect(run.counts.removed).toBe(0);
    const again = await api('POST', `/sources/${source.id}/sync`, { token: user.token });
    expect(again.status).toBe(429);
    expect(again.body.code).toBe('quota_exceeded');
    expect(again.headers.get('retry-after')).toMatch(/^\d+$/);
    await untilIngested(user.token);
  });
});
