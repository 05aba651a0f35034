/**
 * What a chunk's vector carries of its document beside the chunk's own fields (issue 22): the document's
 * type, its upload time and the metadata its owner gave it, so that a search filter can select on them.
 * The documents list filters each row's facets with the same filter (filter.ts, matchesFilter).
 */

/** A metadata key: an identifier, so a key is always a plain path in the vector index's filter language. */
export const METADATA_KEY = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** A document's metadata as stored: flat, of strings, numbers, booleans and lists of strings. */
export type DocumentMetadata = Record<string, string | number | boolean | string[]>;

export interface DocumentFacets {
  /** pdf, docx, …, html; absent while a web page has not been fetched. */
  doc_type?: string;
  /** When the document was uploaded or submitted, in milliseconds since 1970 (ranges compare numbers). */
  uploaded_at: number;
  /** Absent when the document has none. */
  metadata?: DocumentMetadata;
}

export interface FacetSource {
  doc_type: string | null;
  created_at: string | Date;
  metadata?: Record<string, unknown> | null;
}

export function documentFacets(doc: FacetSource): DocumentFacets {
  const metadata = (doc.metadata ?? {}) as DocumentMetadata;
  return {
    ...(doc.doc_type ? { doc_type: doc.doc_type } : {}),
    uploaded_at: new Date(doc.created_at).getTime(),
    ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
  };
}
