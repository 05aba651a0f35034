/**
 * Fetches spread over hosts politely: at most `concurrency` at once per host, and each start at
 * least `delayMs` (or the host's Crawl-delay) after the one before it on that host.
 */
export interface Politeness {
  delayMs: number;
  concurrency: number;
}

export async function eachPolitely<T>(
  items: readonly T[],
  hostOf: (item: T) => string,
  delayOf: (host: string) => number,
  concurrency: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  const byHost = new Map<string, T[]>();
  for (const item of items) {
    const host = hostOf(item);
    byHost.set(host, [...(byHost.get(host) ?? []), item]);
  }
  await Promise.all(
    [...byHost].map(async ([host, queue]) => {
      const delay = delayOf(host);
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
