import { decodeHtml } from '../parsers/html.ts';
import { decodeHtmlEntities } from '../parsers/html-stream.ts';

/** What a crawl reads from a page without parsing it for its text. */
export interface PageLinks {
  title: string | null;
  /** `<link rel="canonical">`, resolved against the page. */
  canonical: string | null;
  /** Every `<a href>` and `<area href>`, resolved, in the page's order. */
  links: string[];
  /** `<meta name="robots" content="nofollow">` (or for our crawler by name). */
  nofollow: boolean;
}

const TAG = /<(a|area|link|base|meta|title)\b([^>]*)>/gi;
const ATTRIBUTE = /([^\s=/>]+)\s*(?:=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g;
/** Links read from one page at most: a page of a million anchors is not a site map we owe a reading. */
const MAX_LINKS = 5000;

function attributes(text: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const match of text.matchAll(ATTRIBUTE)) {
    const name = (match[1] as string).toLowerCase();
    if (!found.has(name)) found.set(name, decodeHtmlEntities(match[2] ?? match[3] ?? match[4] ?? ''));
  }
  return found;
}

/**
 * The links, canonical address and title of an HTML page, read tag by tag rather than through a DOM:
 * a crawl reads every page it fetches, changed or not, and needs none of the rest.
 */
export function readLinks(bytes: Uint8Array, contentType: string | null, pageUrl: string, crawler: string): PageLinks {
  const html = decodeHtml(bytes, contentType).replace(/<!--[\s\S]*?-->/g, '');
  let base = pageUrl;
  let title: string | null = null;
  let canonical: string | null = null;
  let nofollow = false;
  const hrefs: string[] = [];
  for (const match of html.matchAll(TAG)) {
    const tag = (match[1] as string).toLowerCase();
    if (tag === 'title') {
      if (title === null) {
        const end = html.toLowerCase().indexOf('</title>', (match.index ?? 0) + match[0].length);
        const text = end === -1 ? '' : html.slice((match.index ?? 0) + match[0].length, end);
        title = decodeHtmlEntities(text).replace(/\s+/g, ' ').trim().slice(0, 200) || null;
      }
      continue;
    }
    const attrs = attributes(match[2] ?? '');
    const href = attrs.get('href')?.trim();
    if (tag === 'base' && href) base = resolve(href, pageUrl) ?? base;
    else if (tag === 'link' && href && /(^|\s)canonical(\s|$)/i.test(attrs.get('rel') ?? '')) canonical ??= href;
    else if (tag === 'meta') {
      const name = attrs.get('name')?.toLowerCase();
      if ((name === 'robots' || name === crawler) && /nofollow|none/i.test(attrs.get('content') ?? '')) nofollow = true;
    } else if ((tag === 'a' || tag === 'area') && href && hrefs.length < MAX_LINKS) {
      if (!/(^|\s)nofollow(\s|$)/i.test(attrs.get('rel') ?? '')) hrefs.push(href);
    }
  }
  const links = hrefs.flatMap((href) => resolve(href, base) ?? []);
  return { title, canonical: canonical === null ? null : resolve(canonical, base), links, nofollow };
}

function resolve(href: string, base: string): string | null {
  try {
    return new URL(href, base).href;
  } catch {
    return null;
  }
}
