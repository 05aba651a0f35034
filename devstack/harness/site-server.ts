import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

/** One page of a test site; every field but `title` optional. */
export interface SitePage {
  title: string;
  /** Its text, one paragraph per line. */
  text?: string;
  /** Links, as written in the page's anchors (relative or absolute). */
  links?: string[];
  /** `<link rel="canonical">`. */
  canonical?: string;
  /** Answer with this status instead of the page (404, 410, 500). */
  status?: number;
  /** Answer 301 to this location instead of the page. */
  redirect?: string;
  /** Served as is, with this Content-Type, instead of an HTML page made from the fields. */
  raw?: { body: string | Uint8Array; type: string };
  /** Answer only after this many milliseconds. */
  delayMs?: number;
}

/** A request as the site saw it. */
export interface SiteRequest {
  path: string;
  userAgent: string;
  ifNoneMatch: string | null;
  ifModifiedSince: string | null;
  status: number;
  at: number;
}

/**
 * A web site on loopback for the crawl tests and benches: pages made from a description, a robots.txt and
 * sitemaps, ETag and Last-Modified validators that change only when a page does (answering a conditional
 * request 304), and a log of every request, by which a test sees what the crawler fetched and what it never did.
 */
export interface TestSite {
  readonly origin: string;
  url(path: string): string;
  /** Sets (or replaces) a page; its validators change only when what it serves does. */
  set(path: string, page: SitePage): void;
  remove(path: string): void;
  robots(text: string | null): void;
  readonly log: SiteRequest[];
  /** The most requests the site was answering at once. */
  readonly mostAtOnce: number;
  /** Requests for `path` (query included) so far. */
  requests(path: string): SiteRequest[];
  clear(): void;
  stop(): Promise<void>;
}

interface Served {
  page: SitePage;
  body: string | Uint8Array;
  type: string;
  etag: string;
  modified: string;
}

export async function startSite(origin: string): Promise<TestSite> {
  const pages = new Map<string, Served>();
  let robotsTxt: string | null = null;
  const log: SiteRequest[] = [];
  const load = { now: 0, most: 0 };
  // Whole seconds, as HTTP dates are; a page changed twice in a second still gets a new ETag.
  let clock = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;

  function render(path: string, page: SitePage): Served {
    const body =
      page.raw?.body ??
      `<!doctype html><html><head><title>${page.title}</title>${
        page.canonical ? `<link rel="canonical" href="${page.canonical}">` : ''
      }</head><body><main><h1>${page.title}</h1>${(page.text ?? '')
        .split('\n')
        .map((line) => `<p>${line}</p>`)
        .join(
          '',
        )}<ul>${(page.links ?? []).map((href) => `<li><a href="${href}">${href}</a></li>`).join('')}</ul></main></body></html>`;
    const etag = `"${createHash('sha256')
      .update(body)
      .update(String(page.status ?? 200))
      .digest('hex')
      .slice(0, 16)}"`;
    const before = pages.get(path);
    if (before?.etag === etag) return { ...before, page };
    clock += 1000;
    return { page, body, type: page.raw?.type ?? 'text/html; charset=utf-8', etag, modified: new Date(clock).toUTCString() };
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/';
    const entry: SiteRequest = {
      path,
      userAgent: req.headers['user-agent'] ?? '',
      ifNoneMatch: (req.headers['if-none-match'] as string | undefined) ?? null,
      ifModifiedSince: (req.headers['if-modified-since'] as string | undefined) ?? null,
      status: 200,
      at: Date.now(),
    };
    log.push(entry);
    load.now++;
    load.most = Math.max(load.most, load.now);
    const send = (status: number, headers: Record<string, string>, body?: string | Uint8Array) => {
      load.now--;
      entry.status = status;
      res.writeHead(status, headers);
      res.end(body);
    };
    if (path === '/robots.txt') {
      return robotsTxt === null
        ? send(404, { 'content-type': 'text/plain' }, 'no robots')
        : send(200, { 'content-type': 'text/plain' }, robotsTxt);
    }
    const served = pages.get(path);
    if (!served) return send(404, { 'content-type': 'text/html' }, '<p>Not found</p>');
    const answer = () => {
      const { page } = served;
      if (page.redirect) return send(301, { location: page.redirect });
      if (page.status && page.status !== 200) return send(page.status, { 'content-type': 'text/html' }, '<p>No</p>');
      if (entry.ifNoneMatch === served.etag) return send(304, { etag: served.etag, 'last-modified': served.modified });
      send(200, { 'content-type': served.type, etag: served.etag, 'last-modified': served.modified }, served.body);
    };
    if (served.page.delayMs) setTimeout(answer, served.page.delayMs);
    else answer();
  });
  const port = Number(new URL(origin).port);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });

  return {
    origin,
    url: (path) => `${origin}${path}`,
    set: (path, page) => void pages.set(path, render(path, page)),
    remove: (path) => void pages.delete(path),
    robots: (text) => {
      robotsTxt = text;
    },
    log,
    get mostAtOnce() {
      return load.most;
    },
    requests: (path) => log.filter((request) => request.path === path),
    clear: () => {
      log.splice(0);
      load.most = 0;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A sitemap listing these addresses. */
export function sitemapXml(urls: string[]): SitePage {
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls
    .map((url) => `  <url><loc>${url}</loc></url>`)
    .join('\n')}\n</urlset>\n`;
  return { title: 'sitemap', raw: { body, type: 'application/xml' } };
}
