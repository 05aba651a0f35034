import { MAX_CHUNK_SIZE, MIN_CHUNK_SIZE } from '#core/limits.ts';
import type { Block } from '../parsers/types.ts';
import type { Chunk } from './chunk.ts';
import { ChunkBuilder, ChunksFull } from './chunk-builder.ts';
import { placeBlocks } from './placed-blocks.ts';

export interface ChunkOptions {
  /** Maximum characters per chunk, the collection's chunk_size. */
  chunkSize: number;
  /** Characters of trailing whole sentences repeated at the start of the next chunk. */
  overlap?: number;
  /** Chunks at most; the document's text past the last of them is not chunked. */
  maxChunks?: number;
}

/** 15% of the chunk: room for one or two sentences of context across a cut. */
export function defaultOverlap(chunkSize: number): number {
  return Math.round(chunkSize * 0.15);
}

function resolveOptions(options: ChunkOptions): { chunkSize: number; overlap: number } {
  const { chunkSize } = options;
  if (!Number.isInteger(chunkSize) || chunkSize < MIN_CHUNK_SIZE || chunkSize > MAX_CHUNK_SIZE) {
    throw new RangeError(`chunkSize must be an integer from ${MIN_CHUNK_SIZE} to ${MAX_CHUNK_SIZE}, got ${chunkSize}`);
  }
  const overlap = options.overlap ?? defaultOverlap(chunkSize);
  const maxOverlap = Math.floor(chunkSize / 2);
  if (!Number.isInteger(overlap) || overlap < 0 || overlap > maxOverlap) {
    throw new RangeError(`overlap must be an integer from 0 to ${maxOverlap} (half of chunkSize), got ${overlap}`);
  }
  return { chunkSize, overlap };
}

/**
 * Turns a parsed document's blocks into chunks of at most `chunkSize` characters.
 *
 * Structure comes first: a heading starts a new chunk (unless the one being built is
 * tiny) and is never left at a chunk's end; paragraphs, list items and table rows are
 * packed whole while they fit; a block too long for one chunk is cut at sentences, then
 * at words, and a single word only when it alone is longer than a chunk. A table keeps
 * its rows whole and repeats its header row when it continues. A chunk cut inside
 * running text repeats the previous chunk's last whole sentences (up to `overlap`
 * characters), within the size limit. Output is deterministic for the same input.
 */
export function chunkBlocks(blocks: readonly Block[], options: ChunkOptions): Chunk[] {
  return chunkDocument(blocks, options).chunks;
}

/** `chunkBlocks`, and whether `maxChunks` cut the document short. */
export function chunkDocument(blocks: readonly Block[], options: ChunkOptions): { chunks: Chunk[]; truncated: boolean } {
  const { chunkSize, overlap } = resolveOptions(options);
  const placed = placeBlocks(blocks);
  const builder = new ChunkBuilder(placed, chunkSize, overlap, options.maxChunks);
  try {
    let index = 0;
    while (index < placed.length) {
      const block = placed[index];
      if (!block) break;
      if (block.kind === 'heading') {
        builder.addHeading(index);
        index++;
      } else if (block.kind === 'table_row') {
        let end = index + 1;
        while (placed[end]?.kind === 'table_row' && placed[end]?.table === block.table) end++;
        builder.addTable(index, end);
        index = end;
      } else {
        builder.addText(index);
        index++;
      }
    }
    return { chunks: builder.finish(), truncated: false };
  } catch (error) {
    if (!(error instanceof ChunksFull)) throw error;
    return { chunks: builder.made(), truncated: true };
  }
}
