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
  /** PDF page or slide number, 1-based: where the chunk starts. */
  page?: number;
  /** A spreadsheet's sheet name. */
  sheet?: string;
  /** The heading path in effect where the chunk starts, outermost first. */
  headings?: string[];
}

/** Where in its document a passage sits, as a source object gives it. */
export interface PassageLocation {
  documentId: string | null;
  /** PDF page or slide number, or sheet name, where known. */
  page: number | string | null;
  /** The heading path joined with " > ", where known. */
  heading: string | null;
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
  };
}
