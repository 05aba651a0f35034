import type { Sql } from 'postgres';
import type { VectorStore } from '#core/adapters/vectors.ts';
import { namespaceFor } from '#core/namespaces.ts';
import { type ContextSource, contextMetadata, documentContext } from '#retrieval/document-context.ts';
import { documentFacets, type FacetSource } from '#retrieval/document-facets.ts';
import { encodeDocument } from '#retrieval/sparse.ts';
import { type IndexableChunk, indexedText, vectorMetadata } from '#retrieval/vector-metadata.ts';

export interface ReembedDeps {
  sql: Sql;
  vectors: VectorStore;
  /** Null: the new index is sparse-only. */
  embed: ((texts: string[]) => Promise<number[][]>) | null;
  log: (line: string) => void;
}

export interface ReembedResult {
  documents: number;
  chunks: number;
}

// About what the ingest worker embeds in one step.
const BATCH = 64;

/**
 * Writes every indexed chunk's vectors again, from the text Postgres keeps for it, into whatever
 * index `vectors` points at: what a new embedding model or a new index type needs, since vectors
 * cannot be converted. The same ids, metadata and indexed text as the ingest worker's embed step
 * (workers/ingest/src/pipeline/embed.ts), so running it twice, or after a crash, ends the same.
 * Chunks that never got indexed (failed figures, pending ones) are left as they are.
 */
export async function reembedAll(deps: ReembedDeps): Promise<ReembedResult> {
  const { sql, vectors, embed, log } = deps;
  const documents = await sql<
    ({ id: string; name: string; collection_id: string | null; user_id: string } & FacetSource & ContextSource)[]
  >`
    select d.id, d.name, d.collection_id, d.user_id, d.doc_type, d.created_at, d.metadata,
           d.title, d.document_date from documents d
    where exists (select 1 from document_chunks c where c.document_id = d.id and c.state = 'done')
    order by d.created_at, d.id`;
  let chunks = 0;
  for (const [n, doc] of documents.entries()) {
    const rows = await sql<(IndexableChunk & { vector_id: string })[]>`
      select chunk_index, vector_id, chunk_type, text, metadata, image_path from document_chunks
      where document_id = ${doc.id} and state = 'done' and coalesce(btrim(text), '') <> ''
      order by chunk_index`;
    const namespace = namespaceFor(doc.collection_id, doc.user_id);
    const context = documentContext(doc);
    for (let start = 0; start < rows.length; start += BATCH) {
      const batch = rows.slice(start, start + BATCH).map((row) => ({ row, text: indexedText(row, context) }));
      const dense = embed ? await embed(batch.map((b) => b.text)) : undefined;
      const records = batch
        .map(({ row, text }, i) => ({ row, sparse: encodeDocument(text), vector: dense?.[i] }))
        // As in the embed step: a chunk of stopwords alone cannot go into a sparse-only index.
        .filter(({ vector, sparse }) => vector || sparse.indices.length > 0)
        .map(({ row, sparse, vector }) => ({
          id: row.vector_id,
          ...(vector ? { vector } : {}),
          sparseVector: sparse,
          metadata: { ...vectorMetadata(doc.id, doc.name, row, documentFacets(doc)), ...contextMetadata(context) },
        }));
      if (records.length > 0) await vectors.upsert(namespace, records);
      chunks += records.length;
    }
    log(`${n + 1}/${documents.length} documents, ${chunks} chunks: ${doc.name}`);
  }
  return { documents: documents.length, chunks };
}
