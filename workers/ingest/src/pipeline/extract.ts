import { stepMessage } from '../../../../src/ingest/messages.ts';
import { documentFolder, namespaceFor, vectorId } from '../../../../src/ingest/namespace.ts';
import { chunkBlocks } from '../chunking.ts';
import { parseDocument } from '../parsers/index.ts';
import { DEFAULT_PARSE_LIMITS, type ExtractedImage } from '../parsers/types.ts';
import type { NewChunk, PipelineJob } from '../pipeline-db.ts';
import type { PipelineDeps } from './deps.ts';
import { loadSource } from './source.ts';

/**
 * Step 1: parse the document into chunk rows (and figures into stored PNGs), then
 * queue the embedding batches. Re-delivered after the rows exist, it only re-queues
 * the batches that are still pending; QStash drops the duplicates.
 */
export async function extract(deps: PipelineDeps, job: PipelineJob & { document: NonNullable<PipelineJob['document']> }) {
  const doc = job.document;
  await deps.db.markProcessing(job.id);

  if (job.chunks_total === 0) {
    const source = await loadSource(deps, doc);
    const parsed = await parseDocument(source.type, source.bytes, DEFAULT_PARSE_LIMITS, {
      contentType: source.contentType,
      url: source.url,
    });
    const chunks: NewChunk[] = [];
    for (const chunk of chunkBlocks(parsed.blocks, { chunkSize: doc.chunk_size })) {
      chunks.push({
        chunk_index: chunk.index,
        vector_id: await vectorId(doc.id, chunk.index),
        chunk_type: 'text',
        text: chunk.text,
        metadata: chunk.metadata as Record<string, unknown>,
        image_path: null,
      });
    }
    const folder = documentFolder(namespaceFor(doc.collection_id, doc.user_id), doc.id);
    for (const [n, image] of parsed.images.entries()) {
      const index = chunks.length;
      const path = `${folder}/images/${String(n + 1).padStart(3, '0')}.png`;
      await deps.store.put(path, image.png, 'image/png');
      chunks.push({
        chunk_index: index,
        vector_id: await vectorId(doc.id, index),
        chunk_type: 'image_description',
        text: null,
        metadata: imageMetadata(image),
        image_path: path,
      });
    }
    await deps.db.saveChunks(job.id, doc.id, chunks, parsed.warnings);
  }

  await deps.queue.publish(await batches(deps, job.id, doc.id));
}

function imageMetadata(image: ExtractedImage): Record<string, unknown> {
  return { origin: image.origin, width: image.width, height: image.height, ...(image.page ? { page: image.page } : {}) };
}

/** Text chunks travel in batches; each image goes alone, since describing one is slow. */
async function batches(deps: PipelineDeps, jobId: string, documentId: string) {
  const pending = await deps.db.pendingIndexes(documentId);
  const ranges: { from: number; to: number }[] = [];
  let open: { from: number; to: number } | undefined;
  for (const { chunk_index, chunk_type } of pending) {
    const batchable = chunk_type === 'text';
    if (open && batchable && chunk_index === open.to && open.to - open.from < deps.batchSize) {
      open.to += 1;
      continue;
    }
    open = { from: chunk_index, to: chunk_index + 1 };
    ranges.push(open);
    if (!batchable) open = undefined;
  }
  return ranges.map(({ from, to }) => stepMessage(deps.workerUrl, { job_id: jobId, step: 'embed', from, to }));
}
