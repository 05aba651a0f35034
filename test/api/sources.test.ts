import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRAWLER_TOKEN } from '#core/sources/limits.ts';
import { api, db, signUp, stack, type TestUser } from '../support/client.ts';
import { type SitePage, sitemapXml, startSite, type TestSite } from '../support/site-server.ts';
import { addSource, pagesOf, syncNow, untilIngested, waitForSync } from '../support/sources.ts';

/**
 * Sources end to end: the real API and ingest worker crawl a site served on loopback (two origins the
 * workers trust for URL ingestion, stack.siteUrls), through the devstack's QStash, Postgres, Storage and
 * Vector. The site's log shows every request the crawler made, and so every one it did not.
 */
let owner: TestUser;
let site: TestSite;
let other: TestSite;

beforeAll(async () => {
  owner = await signUp('sources');
  site = await startSite(stack.siteUrls[0]);
  other = await startSite(stack.siteUrls[1]);
});

afterAll(async () => {
  await site?.stop();
  await other?.stop();
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
