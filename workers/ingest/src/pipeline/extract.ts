import { describeCause } from '#core/adapters/upstream-error.ts';
import type { ChunkRow, PipelineJob } from '#core/db/ingest-pipeline.ts';
import { quotaWarning } from '#core/ingest-quota.ts';
import { stepMessage } from '#core/messages/ingest.ts';
import { documentFolder, namespaceFor, vectorId } from '#core/namespaces.ts';
import { type ExtractedImage, IMAGE_EXTENSIONS, ParseError } from '../parsers/types.ts';
import { markCopies, writtenWithItsChunk } from './chunk-copies.ts';
import type { PipelineDeps } from './deps.ts';
import { embedBatch } from './embed.ts';
import { finishIfComplete } from './finish.ts';
import { readRange } from './read-range.ts';
import { loadSource } from './source.ts';

type ReadyJob = PipelineJob & { document: NonNullable<PipelineJob['document']> };

/**
 * Step 1: parse the document (a PDF one page range per step) into chunk rows and
 * stored PNGs, then queue the embedding batches for them and the next range.
 * A range whose rows were saved is not read again: its delivery only re-queues.
 * A document read whole into one batch of text is embedded in this same step.
 */
export async function extract(deps: PipelineDeps, job: ReadyJob, fromPage = 1) {
  const doc = job.document;
  await deps.db.markProcessing(job.id);
  if (job.extracted || job.extract_cursor > fromPage) return requeue(deps, job);

  const source = await loadSource(deps, doc);
  const imagesSoFar = await deps.db.imageCount(doc.id);
  const folder = documentFolder(namespaceFor(doc.collection_id, doc.user_id), doc.id);
  // Each image is stored as soon as it is found, so a range's images are never all in memory.
  const images: { path: string; metadata: Record<string, unknown> }[] = [];
  const storeImage = async (image: ExtractedImage) => {
    const name = String(imagesSoFar + images.length + 1).padStart(3, '0');
    const path = `${folder}/images/${name}.${IMAGE_EXTENSIONS[image.mediaType]}`;
    await deps.store.put(path, image.bytes, image.mediaType);
    images.push({ path, metadata: imageMetadata(image) });
  };
  // Parsed and chunked within the document's budget, which also decides whether pages are left to read.
  const range = await readRange(
    {
      type: source.type,
      bytes: source.bytes,
      chunkSize: doc.chunk_size,
      fromPage,
      before: { chunks: job.chunks_total, images: imagesSoFar, decodedBytes: job.decoded_bytes },
      source: { contentType: source.contentType, url: source.url, transferBytes: true, onImage: storeImage },
    },
    deps.budget,
  );
  for (const image of range.images) await storeImage(image);
  if (range.context) {
    await deps.db.saveContext(doc.id, range.context);
    // This step may embed the document itself (embedHere), with this row.
    Object.assign(doc, range.context);
  }
  const { lastPage } = range;
  let { extracted } = range;

  // The owner's daily quota may keep only part of this range; text goes before figures.
  const wanted = range.chunks.length + images.length;
  // A re-chunk makes nothing new (src/api/services/ingest/rechunk.ts), so it takes no quota.
  const granted = job.replaces_document_id
    ? wanted
    : await deps.quota.reserve({ userId: doc.user_id, jobId: job.id, rangeStart: fromPage, wanted, quota: deps.quota.perDay });
  if (granted < wanted) {
    range.chunks.splice(granted);
    const dropped = images.splice(Math.max(0, granted - range.chunks.length));
    await deps.store.remove(dropped.map((image) => image.path));
    range.warnings.push(quotaWarning(deps.quota.perDay, job.chunks_total + granted));
    extracted = true;
  }

  // Indices continue from the ranges before; a retried range gets the same ones.
  const start = job.chunks_total;
  const chunks: ChunkRow[] = [];
  for (const chunk of range.chunks) {
    const index = start + chunk.index;
    chunks.push({
      chunk_index: index,
      vector_id: await vectorId(doc.id, index),
      chunk_type: 'text',
      text: chunk.text,
      metadata: chunk.metadata as Record<string, unknown>,
      image_path: null,
      same_as: null,
    });
  }
  for (const image of images) {
    const index = start + chunks.length;
    chunks.push({
      chunk_index: index,
      vector_id: await vectorId(doc.id, index),
      chunk_type: 'image_description',
      text: null,
      metadata: image.metadata,
      image_path: image.path,
      same_as: null,
    });
  }
  await markCopies(chunks);

  await deps.db.saveRange(job.id, doc.id, chunks, range.warnings, {
    extractCursor: lastPage === undefined ? 1 : lastPage + 1,
    extracted,
    // Set, not added: a range saved again after a retry counts once.
    decodedBytes: job.decoded_bytes + range.decodedBytes,
  });
  const total = start + chunks.length;
  if (extracted && total === 0) {
    if (granted < wanted) throw new ParseError('quota', quotaWarning(deps.quota.perDay, 0));
    throw new ParseError('empty', 'The document has no text or images that could be read');
  }

  const messages = batches(deps, job, chunks);
  if (extracted && images.length === 0 && messages.length === 1 && (await embedHere(deps, job, { from: start, to: total })))
    return;
  if (!extracted && lastPage !== undefined) {
    messages.push(stepMessage(deps.workerUrl, { job_id: job.id, step: 'extract', from_page: lastPage + 1 }, job.user_id));
  }
  await deps.queue.publish(messages);
  // The last range may add nothing while every earlier batch is already done.
  if (extracted) await finishIfComplete(deps, { ...job, chunks_total: total, extracted });
}

/**
 * Most documents are small: embedding their one batch here saves a delivery, a job read and a
 * chunk read, which was a third of the work per document under load (issue 9's load run). If it
 * fails, the batch is queued as its own step, which has its own retries.
 */
async function embedHere(deps: PipelineDeps, job: ReadyJob, range: { from: number; to: number }): Promise<boolean> {
  try {
    await embedBatch(deps, job, range, { retried: 0, final: false });
    return true;
  } catch (error) {
    deps.log.warn('embed_in_extract_failed', { job_id: job.id, cause: describeCause(error).slice(0, 300), queued: true });
    return false;
  }
}

/**
 * Re-delivered after its range was saved (or picked up by the sweep): queue again whatever may not have been
 * queued; with everything read and indexed, the job only had to finish (its last step failed there), so finish it.
 */
async function requeue(deps: PipelineDeps, job: ReadyJob) {
  const pending = await deps.db.pendingChunks(job.document.id, 0, job.chunks_total);
  const messages = batches(deps, job, pending);
  if (!job.extracted) {
    messages.push(stepMessage(deps.workerUrl, { job_id: job.id, step: 'extract', from_page: job.extract_cursor }, job.user_id));
  }
  if (messages.length === 0) return finishIfComplete(deps, job);
  await deps.queue.publish(messages);
}

function imageMetadata(image: ExtractedImage): Record<string, unknown> {
  return { origin: image.origin, width: image.width, height: image.height, ...(image.page ? { page: image.page } : {}) };
}

/**
 * Text chunks travel in batches; each image goes alone, since describing one is slow. A copy of a
 * pending chunk is written by that chunk's batch (chunk-copies.ts), so it needs none: a range may
 * span copies, and other chunks that are not pending, without counting them.
 */
function batches(deps: PipelineDeps, job: PipelineJob, chunks: Pick<ChunkRow, 'chunk_index' | 'chunk_type' | 'same_as'>[]) {
  const pending = new Set(chunks.map((chunk) => chunk.chunk_index));
  const ranges: { from: number; to: number }[] = [];
  let open: { from: number; to: number; size: number } | undefined;
  for (const chunk of chunks) {
    if (writtenWithItsChunk(chunk, pending)) continue;
    const batchable = chunk.chunk_type === 'text';
    if (open && batchable && open.size < deps.batchSize) {
      open.to = chunk.chunk_index + 1;
      open.size++;
      continue;
    }
    open = { from: chunk.chunk_index, to: chunk.chunk_index + 1, size: 1 };
    ranges.push(open);
    if (!batchable) open = undefined;
  }
  return ranges.map(({ from, to }) => stepMessage(deps.workerUrl, { job_id: job.id, step: 'embed', from, to }, job.user_id));
}
