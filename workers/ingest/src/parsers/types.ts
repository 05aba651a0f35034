/**
 * What every parser returns: the document's text as ordered blocks that keep their
 * place (page, slide, sheet) and heading context, plus the images worth describing.
 * The chunker turns blocks into chunks; images become `image_description` chunks.
 */
export interface Block {
  kind: 'heading' | 'paragraph' | 'list_item' | 'table_row';
  text: string;
  /** Heading level 1–6, for kind 'heading'. */
  level?: number;
  /** 1-based page (PDF), slide (PPTX) or, for XLSX, the 1-based sheet index. */
  page?: number;
  /** XLSX sheet name. */
  sheet?: string;
}

export interface ExtractedImage {
  /** PNG bytes. */
  png: Uint8Array;
  width: number;
  height: number;
  /** 1-based page or slide it appears on, when known. */
  page?: number;
  /** A figure inside the document, or a whole page that has no text layer. */
  origin: 'figure' | 'scanned_page';
}

export interface ParsedDocument {
  blocks: Block[];
  images: ExtractedImage[];
  /** Problems that lost part of the document but not all of it (reported as `partial`). */
  warnings: string[];
  /** Pages, slides or sheets in the document, when the format has them. */
  pageCount?: number;
}

// Thrown by the ZIP reader in core too, so it lives there.
export { ParseError, type ParseFailure } from '#core/documents/parse-error.ts';

/** Limits every parser honours, so one bad file cannot exhaust a 128 MB worker. */
export interface ParseLimits {
  /** Images smaller than this on either side are decorative (icons, rules) and skipped. */
  minImageSide: number;
  /** At most this many images per document; the rest are reported in warnings. */
  maxImages: number;
}

export const DEFAULT_PARSE_LIMITS: ParseLimits = { minImageSide: 64, maxImages: 50 };
