/**
 * How a crawl compares URLs: one page is one key, whatever fragment, default port, tracking
 * parameters or trailing slash a link adds; and which paths a source's patterns let in.
 */

const TRACKING = /^(utm_[a-z]+|gclid|fbclid|mc_cid|mc_eid)$/i;

/** The key a page is known by, or null for what is not an http(s) page. */
export function normalizeUrl(raw: string, base?: string): string | null {
  let url: URL;
  try {
    url = base === undefined ? new URL(raw) : new URL(raw, base);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.username || url.password) return null;
  url.hash = '';
  // The URL parser already drops a scheme's default port and lower-cases the host.
  const kept = [...url.searchParams].filter(([name]) => !TRACKING.test(name));
  kept.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  url.search = kept.length ? new URLSearchParams(kept).toString() : '';
  // `/docs/` and `/docs` are one page on nearly every site; the root keeps its slash.
  if (url.pathname.length > 1 && url.pathname.endsWith('/')) url.pathname = url.pathname.replace(/\/+$/, '');
  return url.href;
}

/**
 * A robots.txt-style path pattern: `*` is any run of characters, a trailing `$` anchors the end,
 * and otherwise it matches a prefix of the path (with its query).
 */
export function pathMatches(pattern: string, pathAndQuery: string): boolean {
  const anchored = pattern.endsWith('$');
  const body = anchored ? pattern.slice(0, -1) : pattern;
  const source = body
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}${anchored ? '$' : ''}`).test(pathAndQuery);
}

export interface Scope {
  origins: readonly string[];
  include: readonly string[];
  exclude: readonly string[];
}

/** Whether a crawl of this scope may fetch the (normalised) URL. */
export function inScope(href: string, scope: Scope): boolean {
  const url = new URL(href);
  if (!scope.origins.includes(url.origin)) return false;
  const path = url.pathname + url.search;
  if (scope.exclude.some((pattern) => pathMatches(pattern, path))) return false;
  return scope.include.length === 0 || scope.include.some((pattern) => pathMatches(pattern, path));
}

/** The origins a source may fetch from: those given, else its start URL's. */
export function originsOf(startUrl: string, allowed: readonly string[]): string[] {
  const origins = allowed.map((entry) => new URL(entry).origin);
  return origins.length ? [...new Set(origins)] : [new URL(startUrl).origin];
}
