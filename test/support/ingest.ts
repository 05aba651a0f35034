import { randomUUID } from 'node:crypto';
import { createClient } from '@supabase/supabase-js';
import { Index } from '@upstash/vector';
import { expect } from 'vitest';
import { createJobRepo } from '#core/db/jobs.ts';
import type { FaultyService } from '../../devstack/faults.ts';
import { fileForm } from '../../devstack/harness/api-call.ts';
import { api, db, type Schema, stack } from './client.ts';
import { fixture } from './documents.ts';

export type Job = Schema<'IngestJob'>;

/** POST /ingest/ of one file, into a collection or (none given) the personal namespace. */
export function upload(token: string, name: string, content: Uint8Array | string, collectionId?: string) {
  const query = collectionId === undefined ? '' : (`?collection_id=${collectionId}` as const);
  return api('POST', `/ingest/${query}`, { token, body: fileForm(name, content) });
}

/** Polls the job until it reaches a terminal status, keeping every state seen on the way. */
export async function waitForJob(token: string, jobId: string, timeoutMs = 60_000): Promise<Job & { seen: Job[] }> {
  const seen: Job[] = [];
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const response = await api('GET', `/ingest/jobs/${jobId}`, { token });
    expect(response.status).toBe(200);
    seen.push(response.body);
    if (['succeeded', 'partial', 'failed'].includes(response.body.status)) return { ...response.body, seen };
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`job ${jobId} did not finish: ${JSON.stringify(seen.at(-1))}`);
}

/** Polls a job until `ready` holds, and answers it; fails if the job ends first, or never gets there. */
export async function whileRunning(token: string, jobId: string, ready: (job: Job) => boolean, timeoutMs = 60_000): Promise<Job> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { body: job } = await api('GET', `/ingest/jobs/${jobId}`, { token });
    if (['succeeded', 'partial', 'failed'].includes(job.status)) {
      throw new Error(`job ${jobId} ended before the test could act on it: ${JSON.stringify(job)}`);
    }
    if (ready(job)) return job;
    if (Date.now() > deadline) throw new Error(`job ${jobId} never got there: ${JSON.stringify(job)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function ingestFile(
  token: string,
  name: string,
  collectionId?: string,
  content: Uint8Array | string = fixture(name),
) {
  const created = await upload(token, name, content, collectionId);
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return waitForJob(token, created.body.job_id);
}

export const vectorIndex = () => new Index({ url: stack.vectorUrl, token: stack.vectorToken });

export const storage = () =>
  createClient(stack.supabaseUrl, stack.serviceRoleKey, { auth: { persistSession: false } }).storage.from(stack.storageBucket);

/** Every object key under a Storage folder, however deep. */
export async function objectsUnder(prefix: string): Promise<string[]> {
  const { data, error } = await storage().list(prefix, { limit: 1000 });
  if (error) throw error;
  const keys: string[] = [];
  for (const entry of data ?? []) {
    if (entry.id) keys.push(`${prefix}/${entry.name}`);
    else keys.push(...(await objectsUnder(`${prefix}/${entry.name}`)));
  }
  return keys;
}

export async function chunkRows(documentId: string) {
  return db()<
    {
      chunk_index: number;
      vector_id: string;
      chunk_type: string;
      text: string | null;
      state: string;
      image_path: string | null;
      metadata: any;
    }[]
  >`
    select chunk_index, vector_id, chunk_type, text, state, image_path, metadata
      from document_chunks where document_id = ${documentId} order by chunk_index`;
}

export async function documentOfJob(jobId: string): Promise<string | null> {
  const [row] = await db()<{ document_id: string | null }[]>`select document_id from ingest_jobs where id = ${jobId}`;
  return row?.document_id ?? null;
}

/** A fault of devstack/faults.ts: which requests it takes, and what they get. */
export interface FaultOptions {
  status?: number;
  count?: number;
  skip?: number;
  match?: string;
  method?: string;
  retryAfter?: number;
  /** Matching requests are slowed by this much instead of failing. */
  delayMs?: number;
}

/** Makes a devstack service fail, like an outage, until cleared (or for `count` requests). */
export async function injectFault(service: FaultyService, options: FaultOptions = {}) {
  const response = await fetch(stack.faultsUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ service, ...options }),
  });
  expect(response.ok).toBe(true);
}

export async function clearFaults() {
  await fetch(stack.faultsUrl, { method: 'DELETE' });
}

/**
 * A document's and its job's rows, as POST /ingest/ (a small text file) or, given a URL, POST /ingest/url
 * write them, in a collection or (null) the personal namespace, but without their queue message: what a
 * lost message leaves behind, a step a test delivers itself, or a job that stays `queued`.
 */
export async function queuedJob(
  userId: string,
  collectionId: string | null,
  url?: string,
): Promise<{ jobId: string; documentId: string }> {
  const documentId = randomUUID();
  const jobId = randomUUID();
  const source = url ?? 'queued.txt';
  await createJobRepo(db()).insertWithDocument(
    {
      id: documentId,
      collection_id: collectionId,
      user_id: userId,
      name: source,
      source_kind: url ? 'url' : 'upload',
      source_url: url ?? null,
      content_type: url ? 'text/html' : 'text/plain',
      doc_type: url ? null : 'txt',
      size_bytes: 0,
      storage_path: null,
      chunk_size: 1000,
    },
    { id: jobId, user_id: userId, collection_id: collectionId, source, api_key_id: null },
  );
  return { jobId, documentId };
}

/** A URL job's rows in the user's personal space, without its queue message. */
export const queuedUrlJob = (userId: string, url: string) => queuedJob(userId, null, url);

/** The ids of one document's vectors in a namespace, found by their metadata on every page of the namespace. */
export async function vectorsOf(namespace: string, documentId: string): Promise<string[]> {
  const index = vectorIndex().namespace(namespace);
  const ids: string[] = [];
  let cursor: string | number = 0;
  do {
    const page: { nextCursor: string; vectors: { id: string | number; metadata?: Record<string, unknown> }[] } =
      await index.range({ cursor, limit: 1000, includeMetadata: true });
    for (const vector of page.vectors) if (vector.metadata?.document_id === documentId) ids.push(String(vector.id));
    cursor = page.nextCursor;
  } while (cursor !== '' && cursor !== '0');
  return ids;
}

/** What is left of one document in every store: its row, its chunk rows, its vectors and its stored objects. */
export async function leftOfDocument(namespace: string, documentId: string) {
  const [row] = await db()<{ documents: number; chunks: number }[]>`
    select (select count(*)::int from documents where id = ${documentId}) as documents,
           (select count(*)::int from document_chunks where document_id = ${documentId}) as chunks`;
  return {
    documents: row?.documents ?? 0,
    chunks: row?.chunks ?? 0,
    vectors: (await vectorsOf(namespace, documentId)).length,
    objects: (await objectsUnder(`${namespace}/${documentId}`)).length,
  };
}

/**
 * Polls `probe` until `settled` has held on every poll for `quietMs` on end, so that ingest steps still in
 * flight (whose queue the tests cannot see) have had time to write and take back what they wrote; fails
 * with the last value after `timeoutMs`.
 */
export async function untilQuiet<T>(
  probe: () => Promise<T>,
  settled: (value: T) => boolean,
  { quietMs = 5_000, timeoutMs = 60_000, everyMs = 300 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let since: number | undefined;
  for (;;) {
    const value = await probe();
    const now = Date.now();
    if (!settled(value)) since = undefined;
    else {
      since ??= now;
      if (now - since >= quietMs) return value;
    }
    if (now > deadline) throw new Error(`not settled within ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
