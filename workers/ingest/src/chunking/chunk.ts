/** What the chunker produces: the text that is embedded, with where in the document it came from. */

export interface ChunkMetadata {
  /** The page (slide, sheet index) all of the chunk's text comes from. */
  page?: number;
  /** First and last page, when the chunk's text spans pages. */
  pages?: [number, number];
  /** XLSX sheet name. */
  sheet?: string;
  /** Heading path (h1 > h2 > …) in effect where the chunk starts. */
  headings?: string[];
}

export interface Chunk {
  /** 0-based, dense, in document order. */
  index: number;
  /** What is embedded and shown as the source text. */
  text: string;
  metadata: ChunkMetadata;
}
