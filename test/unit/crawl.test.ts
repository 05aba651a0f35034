import { describe, expect, it } from 'vitest';
import { inScope, normalizeUrl, originsOf, pathMatches } from '#core/sources/urls.ts';
import { readLinks } from '../../workers/ingest/src/crawl/links.ts';
import { eachPolitely } from '../../workers/ingest/src/crawl/polite.ts';
import { readRobots } from '../../workers/ingest/src/crawl/robots.ts';
import { readSitemap } from '../../workers/ingest/src/crawl/sitemap.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('one page, one key', () => {
  it('drops fragments, default ports, tracking parameters and a trailing slash, and sorts the query', () => {
    expect(normalizeUrl('HTTPS://Docs.Example.com:443/guide/?b=2&utm_source=x&a=1#intro')).toBe(
      'https://docs.example.com/guide?a=1&b=2',
    );
    expect(normalizeUrl('http://example.com:80/')).toBe('http://example.com/');
    expect(normalizeUrl('/a/b/', 'https://example.com/x')).toBe('https://example.com/a/b');
    expect(normalizeUrl('https://example.com/?gclid=1&fbclid=2')).toBe('https://example.com/');
  });

  it('is null for what is not an http(s) page', () => {
    for (const raw of [
      'mailto:a@example.com',
      'javascript:alert(1)',
      'ftp://example.com/',
      'https://user:pw@example.com/',
      'not a url',
    ]) {
      expect(normalizeUrl(raw), raw).toBeNull();
    }
  });
});

describe('patterns and scope', () => {
  it('reads patterns as robots.txt does: prefixes, * and an anchoring $', () => {
    expect(pathMatches('/docs', '/docs/intro')).toBe(true);
    expect(pathMatches('/docs/*.pdf$', '/docs/a/b.pdf')).toBe(true);
    expect(pathMatches('/docs/*.pdf$', '/docs/a/b.pdf?x=1')).toBe(false);
    expect(pathMatches('/blog$', '/blog/post')).toBe(false);
    expect(pathMatches('/a+b(c)', '/a+b(c)/d')).toBe(true);
  });

  it('keeps a crawl within its origins, its includes, and out of its excludes', () => {
    const scope = { origins: originsOf('https://example.com/docs/', []), include: ['/docs'], exclude: ['/docs/old'] };
    expect(inScope('https://example.com/docs/new', scope)).toBe(true);
    expect(inScope('https://example.com/docs/old/page', scope)).toBe(false);
    expect(inScope('https://example.com/blog', scope)).toBe(false);
    expect(inScope('https://other.example.com/docs/new', scope)).toBe(false);
    expect(originsOf('https://a.example/', ['https://b.example/x', 'https://b.example'])).toEqual(['https://b.example']);
  });
});

describe('reading a page for its links', () => {
  it('finds anchors, the canonical link, the title, and honours <base> and nofollow', () => {
    const html = `<html><head><title> The  &amp; guide </title><base href="https://example.com/base/">
      <link rel="canonical" href="/guide"></head><body>
      <a href="a">A</a> <a href='/b#x'>B</a> <a href=c.html>C</a> <a rel="nofollow" href="/no">no</a>
      <!-- <a href="/commented">x</a> --> <area href="/map"></body></html>`;
    const read = readLinks(bytes(html), 'text/html', 'https://example.com/page', 'rag-service-crawler');
    expect(read.title).toBe('The & guide');
    expect(read.canonical).toBe('https://example.com/guide');
    expect(read.links).toEqual([
      'https://example.com/base/a',
      'https://example.com/b#x',
      'https://example.com/base/c.html',
      'https://example.com/map',
    ]);
    expect(read.nofollow).toBe(false);
    const meta = readLinks(
      bytes('<meta name="robots" content="noindex, nofollow"><a href="/x">x</a>'),
      null,
      'https://e.com/',
      'rag',
    );
    expect(meta.nofollow).toBe(true);
  });
});

describe('sitemaps and robots.txt', () => {
  it('reads a sitemap’s pages and an index’s sitemaps', () => {
    const map = readSitemap(
      bytes(
        `<?xml version="1.0"?><urlset><url><loc> https://e.com/a?x=1&amp;y=2 </loc></url><url><loc><![CDATA[https://e.com/b]]></loc></url></urlset>`,
      ),
    );
    expect(map).toEqual({ pages: ['https://e.com/a?x=1&y=2', 'https://e.com/b'], sitemaps: [] });
    const index = readSitemap(bytes('<sitemapindex><sitemap><loc>https://e.com/s1.xml</loc></sitemap></sitemapindex>'));
    expect(index.sitemaps).toEqual(['https://e.com/s1.xml']);
  });

  it('follows our own group, its Crawl-delay and Sitemap lines; no file allows everything', () => {
    const robots = readRobots(
      'https://e.com',
      'User-agent: *\nDisallow: /\n\nUser-agent: rag-service-crawler\nDisallow: /private\nAllow: /private/open\nCrawl-delay: 2\n\nSitemap: https://e.com/map.xml\n',
    );
    expect(robots.allowed('https://e.com/docs')).toBe(true);
    expect(robots.allowed('https://e.com/private/x')).toBe(false);
    expect(robots.allowed('https://e.com/private/open/y')).toBe(true);
    expect(robots.delaySeconds).toBe(2);
    expect(robots.sitemaps).toEqual(['https://e.com/map.xml']);
    expect(readRobots('https://e.com', null).allowed('https://e.com/anything')).toBe(true);
  });
});

describe('politeness', () => {
  it('spaces the starts on one host by the delay, runs at most `concurrency` at once, and does not hold back another host', async () => {
    const starts: Record<string, number[]> = {};
    const inFlight: Record<string, number> = {};
    const most: Record<string, number> = {};
    const items = [...Array.from({ length: 6 }, (_, i) => `a${i}`), 'b0', 'b1'];
    const began = Date.now();
    await eachPolitely(
      items,
      (item) => item[0] as string,
      () => 40,
      2,
      async (item) => {
        const host = item[0] as string;
        starts[host] = [...(starts[host] ?? []), Date.now() - began];
        inFlight[host] = (inFlight[host] ?? 0) + 1;
        most[host] = Math.max(most[host] ?? 0, inFlight[host]);
        await new Promise((resolve) => setTimeout(resolve, 100));
        inFlight[host]--;
      },
    );
    const a = starts.a ?? [];
    for (let i = 1; i < a.length; i++) expect((a[i] as number) - (a[i - 1] as number)).toBeGreaterThanOrEqual(35);
    expect(most).toEqual({ a: 2, b: 2 });
    expect(starts.b?.[0]).toBeLessThan(100);
  });

  it('spaces the starts by the last answer’s time, so that on average one fetch is under way, however many lanes', async () => {
    const starts: number[] = [];
    await eachPolitely(
      [1, 2, 3, 4, 5, 6],
      () => 'site',
      () => 0,
      2,
      async () => {
        starts.push(Date.now());
        await new Promise((resolve) => setTimeout(resolve, 60));
      },
    );
    // The first two go at once (nothing is known of the site yet); from then on, one start per answer's time.
    for (let i = 2; i < starts.length; i++) expect((starts[i] as number) - (starts[i - 1] as number)).toBeGreaterThanOrEqual(55);
  });
});
