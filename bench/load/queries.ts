/**
 * The query half of bench/load/load.ts: many `POST /query/` answer streams at once, read as bench/query/query.ts
 * reads them, with the model's own time (from the timing proxy) taken out to leave the service's.
 */
import { run } from '../harness/query-client.ts';
import { measure } from '../harness/query-measure.ts';
import type { Question } from '../harness/query-stack.ts';
import { percentile } from '../harness/stats.ts';
import type { ModelProxy } from '../harness/timing-proxies.ts';

export interface QueryTarget {
  apiUrl: string;
  token: string;
  collectionId: string;
  model: ModelProxy;
}

export interface QueryResult {
  streams: number;
  requests: number;
  /** Requests that did not end with a `done` event (HTTP errors, error events, cut streams). */
  errors: number;
  errorExamples: string[];
  wallS: number;
  /** Client: request start → first token. */
  ttftMs: { p50: number; p99: number };
  /** The model's own time to its first content, as the proxy saw it. */
  modelTtftMs: { p50: number; p99: number };
  /** Client TTFT minus the embedding, the vector query and the model's own time to first content. */
  ttftOverheadMs: { p50: number; p99: number };
  /** Start → done minus embedding, vector query and the whole model call (bench/query/query.ts's figure). */
  overheadMs: { p50: number; p99: number };
}

const NO_DB = { url: '', connections: [], stop: async () => {} };

const p = (values: number[]) => ({ p50: percentile(values, 50), p99: percentile(values, 99) });

const asking = (target: QueryTarget) => ({
  apiUrl: target.apiUrl,
  token: target.token,
  collectionId: target.collectionId,
  topK: 5,
});

/** `count` requests, 20 at a time, before the measured ones; a failure ends the run. */
export async function warmUpQueries(target: QueryTarget, questions: Question[], count: number): Promise<void> {
  if (count === 0) return;
  const { samples } = await run(asking(target), questions, Math.min(20, count), count);
  const failed = samples.find((s) => s.error);
  if (failed) throw new Error(`query warm-up failed: ${failed.error}`);
}

/** `total` requests from `streams` clients at once. */
export async function runQueries(
  target: QueryTarget,
  questions: Question[],
  streams: number,
  total: number,
): Promise<QueryResult> {
  const { samples, wallMs } = await run(asking(target), questions, streams, total);
  const measured = measure(samples, target.model.calls, NO_DB, streams);
  const failed = samples.filter((s) => s.error || s.done === null);
  const modelTtft = (m: (typeof measured)[number]) =>
    m.call.firstContent === null ? Number.NaN : m.call.firstContent - m.call.start;
  return {
    streams,
    requests: samples.length,
    errors: failed.length,
    errorExamples: [...new Set(failed.map((s) => s.error ?? 'no done event'))].slice(0, 3),
    wallS: wallMs / 1000,
    ttftMs: p(measured.map((m) => m.clientTtft)),
    modelTtftMs: p(measured.map(modelTtft)),
    ttftOverheadMs: p(
      measured.map((m) => m.clientTtft - (m.sample.embeddingMs ?? 0) - (m.sample.retrievalMs ?? 0) - modelTtft(m)),
    ),
    overheadMs: p(measured.map((m) => m.overhead)),
  };
}
