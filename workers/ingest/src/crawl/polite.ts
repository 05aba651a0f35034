/**
 * Fetches spread over sites politely: at most `concurrency` at once per site (an origin), and each start
 * at least `delayMs` (or the site's Crawl-delay) after the one before it on that site.
 */
export interface Politeness {
  delayMs: number;
  concurrency: number;
}

export async function eachPolitely<T>(
  items: readonly T[],
  siteOf: (item: T) => string,
  delayOf: (site: string) => number,
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
      const delay = delayOf(site);
      // The step may follow another one's last fetch at once: the first start waits too.
      let nextStart = Date.now() + delay;
      const lane = async () => {
        for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
          const wait = nextStart - Date.now();
          nextStart = Math.max(Date.now(), nextStart) + delay;
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          await task(item);
        }
      };
      await Promise.all(Array.from({ length: Math.max(1, concurrency) }, lane));
    }),
  );
}
