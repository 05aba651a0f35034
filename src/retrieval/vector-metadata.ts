import type { StoredChunk } from '#core/db/documents.ts';
import { contextLine, contextOf, type DocumentContext } from './document-context.ts';
import type { DocumentFacets, DocumentMetadata } from './document-facets.ts';

/**
 * What each vector carries beside its values: written by the ingest worker, read back by the API to
 * cite the passage. Vectors written before a field existed lack it; readers treat it as unknown.
 */
export interface VectorMetadata extends Record<string, unknown> {
  document_id: string;
  /** The document's name, or its URL for a web page. */
  source: string;
  chunk_index: number;
  chunk_type: 'text' | 'image_description';
  text: string;
  image_path?: string;
  /** The document's context (document-context.ts); vectors written before issue 22 lack it. */
  doc_title?: string;
  doc_date?: string;
  /** PDF page or slide number, 1-based: where the chunk starts. */
  page?: number;
  /** A spreadsheet's sheet name. */
  sheet?: string;
  /** The heading path in effect where the chunk starts, outermost first. */
  headings?: string[];
  /** The document's type, upload time and metadata, for search filters (document-facets.ts). */
  doc_type?: string;
  uploaded_at?: number;
  metadata?: DocumentMetadata;
}

/** Where in its document a passage sits, as a source object gives it. */
export interface PassageLocation {
  documentId: string | null;
  /** PDF page or slide number, or sheet name, where known. */
  page: number | string | null;
  /** The heading path joined with " > ", where known. */
  heading: string | null;
  /** Its document's title and date, where its vector carries them (document-context.ts). */
  context?: DocumentContext;
}

export const HEADING_SEPARATOR = ' > ';

export function locationOf(metadata: Record<string, unknown>): PassageLocation {
  const page =
    typeof metadata.page === 'number' && Number.isInteger(metadata.page) && metadata.page >= 1
      ? metadata.page
      : typeof metadata.sheet === 'string' && metadata.sheet !== ''
        ? metadata.sheet
        : null;
  const headings = Array.isArray(metadata.headings)
    ? metadata.headings.filter((h): h is string => typeof h === 'string' && h !== '')
    : [];
  return {
    documentId: typeof metadata.document_id === 'string' ? metadata.document_id : null,
    page,
    heading: headings.length > 0 ? headings.join(HEADING_SEPARATOR) : null,
    ...withContext(contextOf(metadata)),
  };
}

const withContext = (context: DocumentContext | undefined) => (context ? { context } : {});

/** A stored chunk (document_chunks) as much as indexing it needs. */
export type IndexableChunk = StoredChunk;

/** The metadata a chunk's vector carries, from its stored row. */
export function vectorMetadata(documentId: string, name: string, row: IndexableChunk, facets: DocumentFacets): VectorMetadata {
  const { sheet, headings } = row.metadata;
  // A chunk that runs across pages is cited by the page it starts on.
  const page = typeof row.metadata.page === 'number' ? row.metadata.page : (row.metadata.pages as number[] | undefined)?.[0];
  return {
    document_id: documentId,
    source: name,
    chunk_index: row.chunk_index,
    chunk_type: row.chunk_type,
    text: row.text as string,
    ...(row.image_path ? { image_path: row.image_path } : {}),
    ...(typeof page === 'number' && page > 0 ? { page } : {}),
    ...(typeof sheet === 'string' && sheet ? { sheet } : {}),
    ...(Array.isArray(headings) && headings.length > 0 ? { headings: headings as string[] } : {}),
    ...facets,
  };
}

/**
 * What is embedded and encoded for a chunk: its document's context (document-context.ts), its heading path,
 * then its text, since a passage often leaves its subject to its document and the heading above it. What is
 * shown stays the text alone.
 */
export function indexedText(row: IndexableChunk, context?: DocumentContext): string {
  const headings = Array.isArray(row.metadata.headings) ? (row.metadata.headings as string[]) : [];
  return [...(context ? [contextLine(context)] : []), ...headings, row.text as string].join('\n');
}
