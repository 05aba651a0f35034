/**
 * A crawl's politeness towards each site (an origin): at most `concurrency` fetches at once, and between
 * two starts at least the site's floor (CRAWL_HOST_DELAY_MS, or its robots.txt Crawl-delay if longer) and
 * at least as long as its last answer took. The second rule is Scrapy's AutoThrottle at a target of one:
 * on average one fetch is under way, so a server that slows down is asked less often, while one that
 * answers at once (the operator's own, on the same network) is not kept waiting for nothing.
 */
export interface Politeness {
  /** The floor between two fetches from one site, for sites other than the operator's trusted origins. */
  delayMs: number;
  concurrency: number;
  /** INGEST_TRUSTED_ORIGINS: the operator's own sites, which need no floor (the adaptive delay still holds). */
  trustedOrigins: readonly string[];
}

export async function eachPolitely<T>(
  items: readonly T[],
  siteOf: (item: T) => string,
  floorOf: (site: string) => number,
  concurrency: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  const bySite = new Map<string, T[]>();
  for (const item of items) {
    const site = siteOf(item);
    bySite.set(site, [...(bySite.get(site) ?? []), item]);
  }
  await Promise.all(
    [...bySite].map(async ([site, queue]) => {
      const floor = floorOf(site);
      // The step may follow another one's last fetch at once: the first start waits the floor too.
      let nextStart = Date.now() + floor;
      let lastTook = 0;
      const lane = async () => {
        for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
          const wait = nextStart - Date.now();
          nextStart = Math.max(Date.now(), nextStart) + Math.max(floor, lastTook);
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          const started = Date.now();
          try {
            await task(item);
          } finally {
            lastTook = Date.now() - started;
          }
        }
      };
      await Promise.all(Array.from({ length: Math.max(1, concurrency) }, lane));
    }),
  );
}
