/**
 * Ingestion of the SciFact abstracts for bench/retrieval/retrieval.ts: uploads with a few in flight, no more
 * than --max-pending jobs unfinished, one poller.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { log } from '../harness/format.ts';
import { pool } from '../harness/pool.ts';
import { type Job, TERMINAL } from '../harness/stack.ts';
import type { User } from '../harness/user.ts';
import type { Backend, RetrievalSettings } from './flags.ts';
import { type Doc, fileName, fileText } from './scifact.ts';

export interface IngestFigures {
  docs: number;
  wallMs: number;
  docsPerSecond: number;
  statuses: Record<string, number>;
  chunks: number;
  multiChunkDocs: { id: string; chunks: number; chars: number }[];
  zeroChunkDocs: string[];
  failures: { id: string; status: string; error: string | null }[];
  uploadRetries: number;
}

const encoder = new TextEncoder();

async function ingestCorpus(user: User, collectionId: string, docs: readonly Doc[], settings: RetrievalSettings) {
  const started = performance.now();
  const deadline = Date.now() + settings.timeoutMs;
  const pending = new Map<string, string>(); // job id → doc id
  const jobs = new Map<string, Job>(); // doc id → terminal job
  let next = 0;
  let uploadRetries = 0;
  let uploading = true;
  // The first failure on either side stops the other, so a broken run ends promptly.
  let failure: { error: unknown } | undefined;

  const upload = async (doc: Doc): Promise<string> => {
    const bytes = encoder.encode(fileText(doc, settings.format));
    for (let attempt = 0; ; attempt++) {
      const response = await user.call(`/ingest/?collection_id=${collectionId}`, {
        method: 'POST',
        form: () => {
          const form = new FormData();
          form.append('file', new Blob([bytes], { type: 'text/plain' }), fileName(doc, settings.format));
          return form;
        },
      });
      const body = await response.json().catch(() => ({ job_id: undefined }));
      if (response.ok && body.job_id) return body.job_id;
      // A stack this busy can answer 5xx now and then; anything else is a real refusal.
      if (response.status < 500 || attempt >= 3) {
        throw new Error(`upload of ${fileName(doc, settings.format)} failed: ${response.status} ${JSON.stringify(body)}`);
      }
      uploadRetries++;
      await sleep(500 * 2 ** attempt);
    }
  };

  const uploader = async () => {
    while (next < docs.length && !failure) {
      if (Date.now() > deadline) throw new Error('ingestion did not finish in time (--timeout-min)');
      if (pending.size >= settings.maxPending) {
        await sleep(20);
        continue;
      }
      const doc = docs[next++] as Doc;
      pending.set(await upload(doc), doc.id);
    }
  };

  let lastReport = performance.now();
  const poller = async () => {
    while ((uploading || pending.size > 0) && !failure) {
      if (Date.now() > deadline) throw new Error(`ingestion did not finish in time: ${pending.size} jobs unfinished`);
      await pool([...pending], settings.queryConcurrency, async ([jobId, docId]) => {
        const response = await user.call(`/ingest/jobs/${jobId}`, { method: 'GET' });
        if (!response.ok) throw new Error(`GET /ingest/jobs/${jobId}: ${response.status} ${await response.text()}`);
        const job = await response.json();
        if (!TERMINAL.has(job.status)) return;
        jobs.set(docId, job);
        pending.delete(jobId);
      });
      if (performance.now() - lastReport > 15_000) {
        lastReport = performance.now();
        const seconds = (lastReport - started) / 1000;
        log(`  ${jobs.size}/${docs.length} ingested in ${seconds.toFixed(0)} s (${(jobs.size / seconds).toFixed(1)} docs/s)`);
      }
      await sleep(settings.pollMs);
    }
  };

  const stop = (error: unknown) => {
    failure ??= { error };
  };
  const polling = poller().catch(stop);
  await Promise.all(Array.from({ length: settings.uploadConcurrency }, () => uploader().catch(stop)));
  uploading = false;
  await polling;
  if (failure) throw failure.error;
  return { wallMs: performance.now() - started, jobs, uploadRetries };
}

/** Ingests the documents into the collection and reports what became of them. */
export async function ingestScifact(
  user: User,
  collectionId: string,
  backend: Backend,
  docs: readonly Doc[],
  settings: RetrievalSettings,
): Promise<IngestFigures> {
  log(
    `[${backend}] ingesting ${docs.length} abstracts (chunk_size ${settings.chunkSize}, ${settings.uploadConcurrency} uploads in flight)`,
  );
  const ingested = await ingestCorpus(user, collectionId, docs, settings);
  const byId = new Map(docs.map((d) => [d.id, d]));
  const statuses: Record<string, number> = {};
  const failures: IngestFigures['failures'] = [];
  const multiChunkDocs: IngestFigures['multiChunkDocs'] = [];
  const zeroChunkDocs: string[] = [];
  let chunks = 0;
  for (const [id, job] of ingested.jobs) {
    statuses[job.status] = (statuses[job.status] ?? 0) + 1;
    chunks += job.chunks_total;
    if (job.status !== 'succeeded') failures.push({ id, status: job.status, error: job.error_message });
    const doc = byId.get(id) as Doc;
    if (job.chunks_total > 1)
      multiChunkDocs.push({ id, chunks: job.chunks_total, chars: doc.title.length + 2 + doc.text.length });
    if (job.chunks_total === 0) zeroChunkDocs.push(id);
  }
  const figures: IngestFigures = {
    docs: docs.length,
    wallMs: ingested.wallMs,
    docsPerSecond: docs.length / (ingested.wallMs / 1000),
    statuses,
    chunks,
    multiChunkDocs,
    zeroChunkDocs,
    failures,
    uploadRetries: ingested.uploadRetries,
  };
  log(
    `[${backend}] ingested in ${(ingested.wallMs / 1000).toFixed(1)} s (${figures.docsPerSecond.toFixed(1)} docs/s): ` +
      `${JSON.stringify(statuses)}, ${chunks} chunks, ${multiChunkDocs.length} documents in more than one chunk`,
  );
  for (const failure of failures.slice(0, 10)) log(`  ${failure.id}: ${failure.status} ${failure.error ?? ''}`);
  return figures;
}
