import { request } from 'node:http';
import { expect } from 'vitest';
import type { FaultyService } from '../../devstack/faults.ts';
import { type ApiResponse, db, type ErrorBody, stack } from './client.ts';
import { clearFaults, type FaultOptions, injectFault, objectsUnder, vectorIndex } from './ingest.ts';

/**
 * The fault suite's tools: take one upstream down around an operation, check the one error
 * shape the client gets, and count what an operation left behind in every store.
 */

/** Runs `operation` with `service` down, and brings it back up whatever happens. */
export async function whileDown<T>(service: FaultyService, operation: () => Promise<T>, options: FaultOptions = {}): Promise<T> {
  await injectFault(service, options);
  try {
    return await operation();
  } finally {
    await clearFaults();
  }
}

/** How many calls the faults set now saw and failed, per service. */
export async function faultCounts(): Promise<Partial<Record<FaultyService, { seen: number; failed: number }>>> {
  const response = await fetch(stack.faultsUrl);
  const { faults } = (await response.json()) as { faults: { service: FaultyService; seen: number; failed: number }[] };
  const counts: Partial<Record<FaultyService, { seen: number; failed: number }>> = {};
  for (const f of faults) {
    const sum = counts[f.service] ?? { seen: 0, failed: 0 };
    counts[f.service] = { seen: sum.seen + f.seen, failed: sum.failed + f.failed };
  }
  return counts;
}

// What an upstream's own reply or a driver's error looks like: none of it may reach a client.
const UPSTREAM_TEXT =
  /injected|unavailable \(|HTTP \d{3}|ECONN|EPIPE|CONNECTION_|CONNECT_TIMEOUT|socket|postgres|pglite|supabase|upstash|qstash|openai|127\.0\.0\.1|localhost|\bat [\w.<>]+ \(|\.ts:\d+|Error:/i;

/**
 * The one error shape (`{detail, code, request_id}`, nothing else), with this status and code,
 * and a detail written by the service: no upstream's words, host, driver message or stack.
 */
export function expectServiceError(response: Omit<ApiResponse, 'headers'> & { headers?: Headers }, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(Object.keys(response.body ?? {}).sort()).toEqual(['code', 'detail', 'request_id']);
  // Its keys are the error body's, as checked just above.
  const body = response.body as ErrorBody;
  expect(body.code).toBe(code);
  expect(typeof body.detail).toBe('string');
  expect(body.detail).not.toMatch(UPSTREAM_TEXT);
  expect(body.request_id).toMatch(/^[0-9a-f-]{36}$/);
  if (response.headers) expect(body.request_id).toBe(response.headers.get('x-request-id'));
}

/** Everything ingestion may leave, in the database, Storage and the vector index. */
export interface Residue {
  jobs: Record<string, number>;
  documents: number;
  chunks: number;
  objects: number;
  vectors: number;
}

/** What ingestion left for one collection (its namespace and folder have its id). */
export async function residue(collectionId: string): Promise<Residue> {
  const rows = await db()<{ status: string; n: number }[]>`
    select status, count(*)::int as n from ingest_jobs where collection_id = ${collectionId} group by status`;
  const [counts] = await db()<{ documents: number; chunks: number }[]>`
    select (select count(*)::int from documents where collection_id = ${collectionId}) as documents,
           (select count(*)::int from document_chunks c join documents d on d.id = c.document_id
             where d.collection_id = ${collectionId}) as chunks`;
  const info = await vectorIndex().info();
  return {
    jobs: Object.fromEntries(rows.map((r) => [r.status, r.n])),
    documents: counts?.documents ?? 0,
    chunks: counts?.chunks ?? 0,
    objects: (await objectsUnder(collectionId)).length,
    vectors: info.namespaces[collectionId]?.vectorCount ?? 0,
  };
}

/** Polls until `check` holds (it throws while it does not), or fails with its last error. */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** QStash's dead-letter queue entries about one id (a job, an evaluation): its messages and their failure callbacks. */
export async function deadLetters(id: string): Promise<{ dlqId: string; url: string }[]> {
  const response = await fetch(`${stack.qstashUrl}/v2/dlq`, { headers: { authorization: `Bearer ${stack.qstashToken}` } });
  const { messages } = (await response.json()) as { messages: { dlqId: string; url: string; body?: string }[] };
  const about = (body = '') => {
    if (body.includes(id)) return true;
    // A failure callback carries the message it reports on, base64-encoded.
    const source = (JSON.parse(body || '{}') as { sourceBody?: string }).sourceBody;
    return source !== undefined && Buffer.from(source, 'base64').toString('utf8').includes(id);
  };
  return messages.filter((m) => about(m.body)).map(({ dlqId, url }) => ({ dlqId, url }));
}

/** What an operator does once the outage is over: publish these dead letters again. */
export async function retryDeadLetters(dlqIds: string[]) {
  const query = dlqIds.map((id) => `dlqIds=${encodeURIComponent(id)}`).join('&');
  const response = await fetch(`${stack.qstashUrl}/v2/dlq/retry?${query}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.qstashToken}` },
  });
  expect(response.ok).toBe(true);
}

/**
 * POST /ingest/ with the file sent in two halves, `between` running after the first (when the
 * API has done its checks and is reading the body), as a slow client's upload would arrive.
 */
export function uploadInTwoParts(
  token: string,
  collectionId: string,
  name: string,
  text: string,
  between: () => Promise<void>,
): Promise<ApiResponse> {
  const boundary = 'fault-suite-boundary';
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: text/plain\r\n\r\n`;
  const half = Math.floor(text.length / 2);
  const url = new URL(`${stack.apiUrl}/ingest/?collection_id=${collectionId}`);
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    req.on('response', (res) => {
      const parts: Buffer[] = [];
      res.on('data', (part: Buffer) => parts.push(part));
      res.on('end', () => {
        const headers = new Headers(Object.entries(res.headers).map(([k, v]) => [k, String(v)]));
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(parts).toString('utf8')), headers });
      });
    });
    req.on('error', reject);
    req.write(head + text.slice(0, half));
    between().then(
      () => req.end(`${text.slice(half)}\r\n--${boundary}--\r\n`),
      (error: unknown) => {
        req.destroy();
        reject(error);
      },
    );
  });
}

/** An evaluation row as the query endpoint leaves it: answered, not yet scored. */
export async function insertEvaluation(collectionId: string, userId: string): Promise<string> {
  const sources = [{ source: 'tides.txt', chunk_index: 0, text: 'Tides rise twice a day.', score: 1, chunk_type: 'text' }];
  const [row] = await db()<{ id: string }[]>`
    insert into evaluations (collection_id, user_id, question, answer, sources, total_latency_ms, retrieval_latency_ms,
                             engine, retrieval_strategy, top_k)
    values (${collectionId}, ${userId}, 'How often do tides rise?', 'Twice a day [1].', ${db().json(sources)}, 100, 10,
            'test', 'similarity', 1)
    returning id`;
  return (row as { id: string }).id;
}

export async function evaluation(id: string) {
  const [row] = await db()<{ scored_at: string | null; scorer: string | null; scorer_error: string | null }[]>`
    select scored_at, scorer, scorer_error from evaluations where id = ${id}`;
  return row;
}
