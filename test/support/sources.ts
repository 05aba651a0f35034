import { expect } from 'vitest';
import { api, type Schema } from './client.ts';

export type Source = Schema<'WebSource'>;
export type SourceRun = Schema<'WebSourceRun'>;

/** Adds a source through the API; the first sync is running when it answers. */
export async function addSource(token: string, body: Schema<'CreateWebSource'> | Record<string, unknown>): Promise<Source> {
  const response = await api('POST', '/sources', { token, body: body as never });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body as Source;
}

/** Waits for the source's latest sync (or the one after `after`) to end, and answers it. */
export async function waitForSync(
  token: string,
  sourceId: string,
  options: { after?: string; timeoutMs?: number } = {},
): Promise<SourceRun> {
  const deadline = Date.now() + (options.timeoutMs ?? 90_000);
  for (;;) {
    const response = await api('GET', `/sources/${sourceId}`, { token });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const run = (response.body as Source).last_run ?? undefined;
    if (run && run.id !== options.after && run.status !== 'running') return run;
    if (Date.now() > deadline) throw new Error(`sync of ${sourceId} still running: ${JSON.stringify(run)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Starts a sync now and waits for it to end. */
export async function syncNow(token: string, sourceId: string): Promise<SourceRun> {
  const started = await api('POST', `/sources/${sourceId}/sync`, { token });
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  const run = started.body as SourceRun;
  return waitForSync(token, sourceId, { timeoutMs: 90_000 }).then((ended) => {
    expect(ended.id).toBe(run.id);
    return ended;
  });
}

export async function pagesOf(token: string, sourceId: string): Promise<Schema<'WebSourcePage'>[]> {
  const response = await api('GET', `/sources/${sourceId}/pages?limit=200`, { token });
  expect(response.status).toBe(200);
  return response.body as Schema<'WebSourcePage'>[];
}

/** Waits until none of the user's ingest jobs is queued or processing: the pages a sync stored are indexed. */
export async function untilIngested(token: string, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const busy = [];
    for (const status of ['queued', 'processing'] as const) {
      const response = await api('GET', `/ingest/jobs?status=${status}&limit=5`, { token });
      expect(response.status).toBe(200);
      busy.push(...(response.body as unknown[]));
    }
    if (busy.length === 0) return;
    if (Date.now() > deadline) throw new Error(`jobs still at work: ${JSON.stringify(busy)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
