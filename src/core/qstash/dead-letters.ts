import { describeCause, UpstreamError } from '../adapters/upstream-error.ts';

/** QStash lists its dead-letter queue 100 messages a page at most. */
const PAGE = 100;
/** Past this many pages the count is reported as "at least". */
const MAX_PAGES = 10;

export interface DeadLetterCount {
  count: number;
  /** True when there are more than `count` (the listing was cut at MAX_PAGES pages). */
  more: boolean;
}

/**
 * How many messages QStash's dead-letter queue holds (`GET /v2/dlq`, paged by its cursor): messages
 * and failure callbacks that failed every retry, waiting for an operator (docs/operations.md says
 * what to do with them). QStash has no count of its own, so the pages are counted.
 */
export async function countDeadLetters(
  queue: { url: string; token: string },
  options: { signal?: AbortSignal } = {},
): Promise<DeadLetterCount> {
  const base = `${queue.url.replace(/\/+$/, '')}/v2/dlq`;
  let count = 0;
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const query = new URLSearchParams({ count: String(PAGE), ...(cursor ? { cursor } : {}) });
    const response = await fetch(`${base}?${query}`, {
      headers: { authorization: `Bearer ${queue.token}` },
      signal: options.signal,
    }).catch((cause: unknown) => {
      throw new UpstreamError('queue', `dead-letter queue: ${describeCause(cause)}`, { cause });
    });
    if (!response.ok) {
      await response.body?.cancel();
      throw new UpstreamError('queue', `dead-letter queue: HTTP ${response.status}`);
    }
    const listed = (await response.json()) as { messages?: unknown[]; cursor?: string };
    count += listed.messages?.length ?? 0;
    cursor = listed.cursor || undefined;
    if (!cursor) return { count, more: false };
  }
  return { count, more: true };
}
