import type { UsageSink } from '#core/adapters/models.ts';
import type { VectorRecord } from '#core/adapters/vectors.ts';
import type { ChunkRow } from '#core/db/ingest-pipeline.ts';
import { type ContextSource, contextMetadata, type DocumentContext, documentContext } from '#retrieval/document-context.ts';
import { documentFacets, type FacetSource } from '#retrieval/document-facets.ts';
import { encodeDocument, type SparseVector } from '#retrieval/sparse.ts';
import { indexedText, type VectorMetadata, vectorMetadata } from '#retrieval/vector-metadata.ts';
import type { PipelineDeps } from './deps.ts';

/**
 * A document that repeats itself (a workbook of one shared string, a paragraph of one sentence, a
 * footer on every page) is embedded once per distinct text. The extract step marks each chunk whose
 * heading path and text an earlier chunk of the same range has (`same_as`). That earlier chunk's
 * batch writes every copy's vector with the same values, under the copy's own id and metadata, and
 * marks the earlier chunk done only after its copies, so a copy is never left behind by a batch cut
 * short. Copies are not batched on their own: the batch that holds them skips them.
 */

/** Copies written per vector upsert: each carries the whole dense vector, so a page stays a few megabytes. */
const COPIES_PER_PAGE = 200;

/** Sets `same_as` on each text chunk whose heading path and text an earlier chunk of `chunks` has. */
export async function markCopies(chunks: ChunkRow[]): Promise<void> {
  const first = new Map<string, number>();
  for (const chunk of chunks) {
    if (chunk.chunk_type !== 'text' || chunk.text === null) continue;
    // A digest rather than the text as the key: the range's text is not held twice.
    const key = await digest(JSON.stringify([chunk.metadata.headings ?? [], chunk.text]));
    const earlier = first.get(key);
    if (earlier === undefined) first.set(key, chunk.chunk_index);
    else chunk.same_as = earlier;
  }
}

/**
 * Whether a chunk needs no batch of its own: it is a copy of a pending chunk, whose batch writes it
 * (batchChunks leaves it out of any other). A copy of a chunk done already is batched as any chunk.
 */
export const writtenWithItsChunk = (chunk: Pick<ChunkRow, 'same_as'>, pending: Set<number>) =>
  chunk.same_as !== null && pending.has(chunk.same_as);

export interface Encoded {
  /** Absent without a dense embedding model. */
  vector?: number[];
  sparse: SparseVector;
}

/** Dense and sparse vectors for the rows with text, one embedding per distinct indexed text. */
export async function encodeRows(
  deps: PipelineDeps,
  rows: ChunkRow[],
  context: DocumentContext,
  onUsage?: UsageSink,
): Promise<Map<ChunkRow, Encoded>> {
  const byText = new Map<string, ChunkRow[]>();
  for (const row of rows) {
    if ((row.text ?? '').trim() === '') continue;
    // The document's context and the heading path are indexed with the text (both dense and sparse), since a
    // passage often leaves its subject to them. What is shown stays the text alone.
    const text = indexedText(row, context);
    const same = byText.get(text);
    if (same) same.push(row);
    else byText.set(text, [row]);
  }
  const texts = [...byText.keys()];
  const dense = deps.models.embed && texts.length > 0 ? await deps.models.embed(texts, onUsage) : undefined;
  const encoded = new Map<ChunkRow, Encoded>();
  texts.forEach((text, i) => {
    const value: Encoded = { vector: dense?.[i], sparse: encodeDocument(text) };
    for (const row of byText.get(text) ?? []) encoded.set(row, value);
  });
  return encoded;
}

/** A chunk of nothing but stopwords has no sparse terms; without a dense vector it cannot be indexed. */
export const indexable = (encoded: Encoded | undefined): encoded is Encoded =>
  encoded !== undefined && (encoded.vector !== undefined || encoded.sparse.indices.length > 0);

export function vectorRecord(
  doc: { id: string; name: string } & FacetSource & ContextSource,
  row: Omit<ChunkRow, 'text'> & { text: string | null },
  encoded: Encoded,
): VectorRecord<VectorMetadata> {
  return {
    id: row.vector_id,
    ...(encoded.vector ? { vector: encoded.vector } : {}),
    sparseVector: encoded.sparse,
    metadata: { ...vectorMetadata(doc.id, doc.name, row, documentFacets(doc)), ...contextMetadata(documentContext(doc)) },
  };
}

/**
 * Writes and marks done the pending copies of the chunks from..to, a page at a time, with their chunk's
 * vectors. Returns the vector ids written, for a deletion seen afterwards to take back.
 */
export async function writeCopies(
  deps: PipelineDeps,
  doc: { id: string; name: string } & FacetSource & ContextSource,
  namespace: string,
  range: { from: number; to: number },
  originals: Map<number, { row: ChunkRow; encoded: Encoded | undefined }>,
): Promise<string[]> {
  const written: string[] = [];
  if (originals.size === 0) return written;
  // A copy comes after its chunk.
  let after = range.from;
  for (;;) {
    const copies = await deps.db.pendingCopies(doc.id, range, after, COPIES_PER_PAGE);
    if (copies.length === 0) return written;
    after = copies.at(-1)?.chunk_index ?? after;
    const records: VectorRecord<VectorMetadata>[] = [];
    const done: number[] = [];
    for (const copy of copies) {
      const original = originals.get(copy.same_as);
      // Its chunk is not this batch's to write (done already, so the copy is batched itself).
      if (!original) continue;
      done.push(copy.chunk_index);
      if (indexable(original.encoded)) {
        records.push(vectorRecord(doc, { ...copy, text: original.row.text }, original.encoded));
      }
    }
    if (records.length > 0) await deps.vectors.upsert(namespace, records);
    written.push(...records.map((record) => record.id));
    await deps.db.markDone(doc.id, [], done);
  }
}

async function digest(text: string): Promise<string> {
  const bytes = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
