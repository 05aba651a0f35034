/** The correctness checks of bench/crawl/crawl.ts: a sync after changes and pages gone, and robots.txt obeyed. */
import { setTimeout as sleep } from 'node:timers/promises';
import { CRAWLER_TOKEN } from '#core/sources/limits.ts';
import { sitemapXml, type TestSite } from '../../devstack/harness/site-server.ts';
import { call, createCollection, documentsOf, runEnded, type Stack, untilIndexed } from './api.ts';
import { embeddingCalls, syncRun } from './measurements.ts';
import { CHANGED, type Counts, GONE, PAGES, type Source, TIMEOUT_MS } from './settings.ts';
import { article, html, pageHtml, pagePath } from './site.ts';

/** A check of the run: printed, and failing the run at the end when false. */
export interface Check {
  what: string;
  ok: boolean;
  detail: string;
}

export function expectCounts(what: string, counts: Counts, expected: Partial<Counts>): Check {
  const wrong = Object.entries(expected).filter(([key, value]) => counts[key as keyof Counts] !== value);
  return { what, ok: wrong.length === 0, detail: JSON.stringify(counts) };
}

export async function correctness(stack: Stack, site: TestSite, sourceId: string, collectionId: string) {
  const byPath = async () =>
    new Map(
      (await documentsOf(stack, collectionId))
        .filter((doc) => doc.source_id === sourceId)
        .map((doc) => [new URL(doc.name).pathname, doc.id]),
    );
  const before = await byPath();
  const changedPaths = Array.from({ length: CHANGED }, (_, i) => pagePath(i + 1));
  const gonePaths = Array.from({ length: GONE }, (_, i) => pagePath(CHANGED + i + 1));
  for (const [i, path] of changedPaths.entries()) {
    site.set(
      path,
      html(
        pageHtml(
          i + 1,
          `Update: in the spring survey the volunteers found a second ${i + 1}-metre stone stair beneath the floor.`,
        ),
      ),
    );
  }
  for (const path of gonePaths) site.set(path, { title: 'gone', status: 404 });
  const unchanged = PAGES + 1 - CHANGED - GONE;

  const firstStart = performance.now();
  const first = await syncRun(stack, site, sourceId, collectionId);
  const firstIndexed = await untilIndexed(stack, collectionId, Date.now() + TIMEOUT_MS);
  await sleep(200);
  const changedEmbeddingCalls = embeddingCalls(stack, firstStart, firstIndexed);
  const afterFirst = await byPath();
  const same = [...before.keys()].filter((path) => !changedPaths.includes(path));
  const checks: Check[] = [
    expectCounts(
      `sync after ${CHANGED} changes and ${GONE} pages gone: ${CHANGED} changed, ${GONE} gone, nothing removed`,
      first.counts,
      {
        added: 0,
        changed: CHANGED,
        unchanged,
        gone: GONE,
        removed: 0,
        failed: 0,
      },
    ),
    {
      what: `the ${CHANGED} changed pages have new documents`,
      ok: changedPaths.every((path) => afterFirst.has(path) && afterFirst.get(path) !== before.get(path)),
      detail: `${changedPaths.filter((path) => afterFirst.has(path) && afterFirst.get(path) !== before.get(path)).length} new ids`,
    },
    {
      what: `the other ${same.length} pages (the gone ones included) keep their documents`,
      ok: afterFirst.size === before.size && same.every((path) => afterFirst.get(path) === before.get(path)),
      detail: `${same.filter((path) => afterFirst.get(path) === before.get(path)).length} same ids, ${afterFirst.size} documents`,
    },
  ];

  const second = await syncRun(stack, site, sourceId, collectionId);
  const afterSecond = await byPath();
  const kept = [...afterFirst.keys()].filter((path) => !gonePaths.includes(path));
  checks.push(
    expectCounts(`the next sync: the ${GONE} gone pages removed, nothing changed`, second.counts, {
      added: 0,
      changed: 0,
      unchanged: unchanged + CHANGED,
      gone: GONE,
      removed: GONE,
      failed: 0,
    }),
    {
      what: `the ${GONE} removed pages' documents are gone`,
      ok: gonePaths.every((path) => !afterSecond.has(path)),
      detail: `${gonePaths.filter((path) => afterSecond.has(path)).length} left`,
    },
    {
      what: `the other ${kept.length} documents are as they were`,
      ok: afterSecond.size === kept.length && kept.every((path) => afterSecond.get(path) === afterFirst.get(path)),
      detail: `${afterSecond.size} documents, ${kept.filter((path) => afterSecond.get(path) === afterFirst.get(path)).length} same ids`,
    },
    { what: 'the second sync started no ingest job', ok: second.newJobs === 0, detail: `${second.newJobs} jobs` },
  );
  return { changedSync: first, changedEmbeddingCalls, removingSync: second, checks };
}

/** A site whose robots.txt keeps our crawler out of /private/ (and another robot out of everything). */
export async function robotsCheck(stack: Stack, site: TestSite): Promise<{ counts: Counts; fetched: string[]; checks: Check[] }> {
  const publicPages = Array.from({ length: 20 }, (_, i) => `/guide/${i + 1}`);
  const privatePages = Array.from({ length: 10 }, (_, i) => `/private/${i + 1}`);
  site.robots(`User-agent: other-bot\nDisallow: /\n\nUser-agent: ${CRAWLER_TOKEN}\nDisallow: /private/\n`);
  const all = [...publicPages, ...privatePages];
  site.set('/', { title: 'Guide', text: 'Every page of the guide.', links: all });
  for (const [i, path] of all.entries()) {
    site.set(path, { title: `Guide page ${i + 1}`, text: article(5000 + i).paragraphs.join('\n'), links: ['/'] });
  }
  site.set('/sitemap.xml', sitemapXml(all.map((path) => site.url(path))));
  site.clear();
  const collectionId = await createCollection(stack, 'robots');
  const source: Source = await call(
    stack,
    'POST',
    '/sources',
    { kind: 'site', url: site.url('/'), collection_id: collectionId, sitemap_url: site.url('/sitemap.xml') },
    201,
  );
  const { run } = await runEnded(stack, source.id);
  await untilIndexed(stack, collectionId, Date.now() + TIMEOUT_MS);
  const fetched = site.log.map((r) => r.path);
  const forbidden = fetched.filter((path) => path.startsWith('/private/'));
  return {
    counts: run.counts,
    fetched,
    checks: [
      {
        what: `robots.txt: none of the ${privatePages.length} disallowed pages fetched`,
        ok: forbidden.length === 0,
        detail: `${forbidden.length} fetched`,
      },
      expectCounts(`robots.txt: ${privatePages.length} skipped, the ${publicPages.length + 1} others added`, run.counts, {
        skipped: privatePages.length,
        added: publicPages.length + 1,
        failed: 0,
      }),
      {
        what: 'every request named the crawler',
        ok: site.log.every((r) => r.userAgent.includes(CRAWLER_TOKEN)),
        detail: [...new Set(site.log.map((r) => r.userAgent))].join(', '),
      },
    ],
  };
}
