import { describeCause } from '#core/adapters/upstream-error.ts';
import type { ChunkRow, PipelineJob } from '#core/db/ingest-pipeline.ts';
import { namespaceFor } from '#core/namespaces.ts';
import type { Attempt } from '#core/qstash/worker-shell.ts';
import { encodeDocument } from '#core/retrieval/sparse.ts';
import { indexedText, type VectorMetadata, vectorMetadata } from '#core/retrieval/vector-metadata.ts';
import type { PipelineDeps } from './deps.ts';
import { finishIfComplete } from './finish.ts';

/**
 * Step 2, once per batch: describe images, embed, upsert, mark done. Upserts by a
 * deterministic id, so a retried batch overwrites what a crashed attempt wrote.
 */
export async function embedBatch(
  deps: PipelineDeps,
  job: PipelineJob & { document: NonNullable<PipelineJob['document']> },
  range: { from: number; to: number },
  attempt: Attempt,
) {
  const doc = job.document;
  const rows = await deps.db.pendingChunks(doc.id, range.from, range.to);
  const described: { index: number; text: string }[] = [];
  const failed: { index: number; error: string }[] = [];

  for (const row of rows) {
    if (row.chunk_type !== 'image_description' || row.text !== null) continue;
    try {
      const text = await deps.models.describeImage(await deps.store.get(row.image_path as string));
      described.push({ index: row.chunk_index, text });
      row.text = text;
    } catch (error) {
      // Transient failures get QStash's retries; the last attempt records the loss instead.
      if (!attempt.final) throw error;
      console.error(`job ${job.id}: image chunk ${row.chunk_index} failed: ${describeCause(error)}`);
      failed.push({ index: row.chunk_index, error: imageFailure(row) });
    }
  }

  const ready = rows.filter((row) => !failed.some((f) => f.index === row.chunk_index));
  // The heading path is indexed with the text (both dense and sparse), since a passage
  // often leaves its subject to the heading above it. What is shown stays the text alone.
  const candidates = ready
    .filter((row) => (row.text ?? '').trim() !== '')
    .map((row) => ({ row, indexed: indexedText(row), sparse: encodeDocument(indexedText(row)) }));
  const dense =
    deps.models.embed && candidates.length > 0 ? await deps.models.embed(candidates.map((c) => c.indexed)) : undefined;
  // A chunk of nothing but stopwords has no sparse terms; without a dense vector it cannot be indexed.
  const indexable = candidates
    .map((candidate, i) => ({ ...candidate, vector: dense?.[i] }))
    .filter((candidate) => candidate.vector || candidate.sparse.indices.length > 0);
  if (indexable.length > 0) {
    await deps.vectors.upsert<VectorMetadata>(
      namespaceFor(doc.collection_id, doc.user_id),
      indexable.map(({ row, sparse, vector }) => ({
        id: row.vector_id,
        ...(vector ? { vector } : {}),
        sparseVector: sparse,
        metadata: vectorMetadata(doc.id, doc.name, row),
      })),
    );
  }

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
    await deps.vectors.delete(
      namespaceFor(doc.collection_id, doc.user_id),
      indexable.map(({ row }) => row.vector_id),
    );
    return;
  }
  await finishIfComplete(deps, job);
}

function imageFailure(row: ChunkRow): string {
  const page = row.metadata.page;
  const kind = row.metadata.origin === 'scanned_page' ? 'scanned page' : 'figure';
  return typeof page === 'number' ? `the ${kind} on page ${page} could not be described` : `a ${kind} could not be described`;
}
