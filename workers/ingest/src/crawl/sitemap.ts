import { decodeHtmlEntities } from '../parsers/html-stream.ts';

/** A sitemap's page addresses, or a sitemap index's sitemaps (sitemaps.org protocol 0.9). */
export interface Sitemap {
  pages: string[];
  sitemaps: string[];
}

/** Entries read from one sitemap at most (the protocol's own limit is 50,000). */
const MAX_ENTRIES = 50_000;

export function readSitemap(bytes: Uint8Array): Sitemap {
  const xml = new TextDecoder().decode(bytes);
  const pages: string[] = [];
  const sitemaps: string[] = [];
  const entry = /<(url|sitemap)\b[^>]*>([\s\S]*?)<\/\1\s*>/gi;
  for (const match of xml.matchAll(entry)) {
    if (pages.length + sitemaps.length >= MAX_ENTRIES) break;
    const loc = /<loc\b[^>]*>([\s\S]*?)<\/loc\s*>/i.exec(match[2] as string)?.[1];
    if (!loc) continue;
    const href = decodeHtmlEntities(loc.replace(/^\s*<!\[CDATA\[|\]\]>\s*$/g, '').trim());
    ((match[1] as string).toLowerCase() === 'url' ? pages : sitemaps).push(href);
  }
  return { pages, sitemaps };
}
