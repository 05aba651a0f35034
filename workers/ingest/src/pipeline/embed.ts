import type { ModelUsage } from '#core/adapters/models.ts';
import type { ChunkRow, PipelineJob } from '#core/db/ingest-pipeline.ts';
import { namespaceFor } from '#core/namespaces.ts';
import type { Attempt } from '#core/qstash/worker-shell.ts';
import { documentContext } from '#retrieval/document-context.ts';
import { IMAGE_EXTENSIONS, type ImageMediaType } from '../parsers/types.ts';
import { encodeRows, indexable, vectorRecord, writeCopies } from './chunk-copies.ts';
import type { PipelineDeps } from './deps.ts';
import { finishIfComplete } from './finish.ts';

type EmbeddedJob = PipelineJob & { document: NonNullable<PipelineJob['document']> };

/**
 * Step 2, once per batch: describe images, embed, upsert, mark done. Upserts by a
 * deterministic id, so a retried batch overwrites what a crashed attempt wrote. Each
 * distinct text is embedded once, and copies of the batch's chunks elsewhere in the
 * document are written with them (chunk-copies.ts).
 */
export async function embedBatch(deps: PipelineDeps, job: EmbeddedJob, range: { from: number; to: number }, attempt: Attempt) {
  const doc = job.document;
  const namespace = namespaceFor(doc.collection_id, doc.user_id);
  const rows = await deps.db.batchChunks(doc.id, range.from, range.to);
  const described: { index: number; text: string }[] = [];
  const failed: { index: number; error: string }[] = [];
  // Every call the provider answered, recorded even when the batch is retried: each attempt was paid for.
  const usage: ModelUsage[] = [];
  const onUsage = (u: ModelUsage) => usage.push(u);

  for (const row of rows) {
    if (row.chunk_type !== 'image_description' || row.text !== null) continue;
    try {
      const path = row.image_path as string;
      const text = await deps.models.describeImage(await deps.store.get(path), imageMediaType(path), onUsage);
      described.push({ index: row.chunk_index, text });
      row.text = text;
    } catch (error) {
      // Transient failures get QStash's retries; the last attempt records the loss instead.
      if (!attempt.final) throw error;
      deps.log.error('image_chunk_failed', error, { job_id: job.id, chunk_index: row.chunk_index });
      failed.push({ index: row.chunk_index, error: imageFailure(row) });
    }
  }

  const ready = rows.filter((row) => !failed.some((f) => f.index === row.chunk_index));
  const encoded = await encodeRows(deps, ready, documentContext(doc), onUsage);
  await recordUsage(deps, job, usage);
  // Copies first: these chunks are marked done after them, so a batch cut short leaves none behind.
  const originals = new Map(
    ready.filter((row) => row.same_as === null).map((row) => [row.chunk_index, { row, encoded: encoded.get(row) }]),
  );
  const written = await writeCopies(deps, doc, namespace, range, originals);
  const records = ready.flatMap((row) => {
    const vectors = encoded.get(row);
    return indexable(vectors) ? [vectorRecord(doc, row, vectors)] : [];
  });
  if (records.length > 0) await deps.vectors.upsert(namespace, records);
  written.push(...records.map((record) => record.id));

  await deps.db.markDone(
    doc.id,
    described.filter((d) => !failed.some((f) => f.index === d.index)),
    ready.map((row) => row.chunk_index),
  );
  for (const { index, error } of failed) await deps.db.markFailed(doc.id, [index], error);

  // Deleted, or being deleted, while this batch ran: take back what was written. A deletion marks the row
  // (or its collection) before it removes any vector, so a mark not seen here is one whose removal comes after
  // this upsert and takes these vectors with it.
  if (!(await deps.db.documentLive(doc.id))) {
    await deps.vectors.delete(namespace, written);
    return;
  }
  await finishIfComplete(deps, job);
}

/**
 * The batch's model calls, under the job's user (the uploader, or a re-chunk's admin), the API key it was made
 * with, and its collection.
 */
async function recordUsage(deps: PipelineDeps, job: EmbeddedJob, usage: ModelUsage[]) {
  if (!deps.usage || usage.length === 0) return;
  const context = {
    userId: job.user_id,
    apiKeyId: job.api_key_id,
    collectionId: job.document.collection_id,
    // The request that queued the job (its upload, URL, sync or re-chunk), carried in every step's message.
    requestId: deps.log.requestId,
    jobId: job.id,
    purpose: 'ingest' as const,
  };
  // Not worth failing the batch for (its vectors are what matters): logged instead.
  await deps.usage.record(context, usage).catch((error: unknown) => {
    deps.log.error('usage_not_recorded', error, { job_id: job.id });
  });
}

/** Images are stored under their type's extension (extract.ts); those stored before that are all PNGs. */
function imageMediaType(path: string): ImageMediaType {
  const ext = path.slice(path.lastIndexOf('.') + 1).toLowerCase();
  const found = Object.entries(IMAGE_EXTENSIONS).find(([, known]) => known === ext)?.[0];
  return (found as ImageMediaType | undefined) ?? 'image/png';
}

function imageFailure(row: ChunkRow): string {
  const page = row.metadata.page;
  if (row.metadata.origin === 'image') return 'the image could not be described';
  const kind = row.metadata.origin === 'scanned_page' ? 'scanned page' : 'figure';
  return typeof page === 'number' ? `the ${kind} on page ${page} could not be described` : `a ${kind} could not be described`;
}
