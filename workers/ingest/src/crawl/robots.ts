import robotsParser from 'robots-parser';
import { CRAWLER_TOKEN } from '#core/sources/limits.ts';

/** One origin's robots.txt as the crawler reads it; a missing file allows everything. */
export interface Robots {
  allowed(url: string): boolean;
  /** `Crawl-delay` for our group, in seconds. */
  delaySeconds: number | undefined;
  sitemaps: string[];
}

export function readRobots(origin: string, text: string | null): Robots {
  if (text === null) return { allowed: () => true, delaySeconds: undefined, sitemaps: [] };
  const robots = robotsParser(`${origin}/robots.txt`, text);
  return {
    allowed: (url) => robots.isAllowed(url, CRAWLER_TOKEN) !== false,
    delaySeconds: robots.getCrawlDelay(CRAWLER_TOKEN),
    sitemaps: robots.getSitemaps(),
  };
}
