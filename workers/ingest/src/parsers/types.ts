import {
  MAX_DOCUMENT_CHARS,
  MAX_PDF_DOCUMENT_DECODED_BYTES,
  MAX_PDF_PAGE_DECODED_BYTES,
  MAX_PDF_PAGES,
  MAX_PDF_STEP_DECODED_BYTES,
  MAX_PDF_STREAM_BYTES,
} from '#core/limits.ts';
import type { DecodeLimits } from './pdf-decode-budget.ts';

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
  /**
   * The text reads on from the block before: a paragraph too long to handle whole, cut by the
   * parser at a blank (see long-text.ts). The chunker joins the two with a space.
   */
  continues?: boolean;
}

/**
 * How an image is stored and sent to the vision model. Figures and scanned pages are encoded as PNG;
 * an uploaded JPEG or WebP is kept as it came, since decoding a photograph in a worker costs seconds
 * and re-encoding it makes it larger, while every vision model reads both.
 */
export type ImageMediaType = 'image/png' | 'image/jpeg' | 'image/webp';

/** The file extension an image of each type is stored under. */
export const IMAGE_EXTENSIONS: Record<ImageMediaType, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp' };

export interface ExtractedImage {
  bytes: Uint8Array;
  mediaType: ImageMediaType;
  width: number;
  height: number;
  /** 1-based page or slide it appears on, when known. */
  page?: number;
  /** A figure inside the document, a whole page that has no text layer, or an image that is the whole document. */
  origin: 'figure' | 'scanned_page' | 'image';
}

export interface ParsedDocument {
  blocks: Block[];
  images: ExtractedImage[];
  /** Problems that lost part of the document but not all of it (reported as `partial`). */
  warnings: string[];
  /** Pages, slides or sheets in the document, when the format has them. */
  pageCount?: number;
  /** The document's budget ran out: nothing after the stop was read (a PDF's later pages neither). */
  truncated?: boolean;
  /** A PDF range that ended early, its decoding share spent: its last page read; the next step reads on. */
  lastPage?: number;
  /** Bytes pdf.js decompressed for this range. */
  decodedBytes?: number;
  /** The title the file gives itself (document-properties.ts), where its format has a place for one. */
  title?: string;
  /** The file's own date, YYYY-MM-DD, likewise. */
  date?: string;
}

// Thrown by the ZIP reader in core too, so it lives there.
export { ParseError, type ParseFailure } from './parse-error.ts';

/** Limits every parser honours, so one bad file cannot exhaust a 128 MB worker or hold it for minutes. */
export interface ParseLimits {
  /** Images smaller than this on either side are decorative (icons, rules) and skipped. */
  minImageSide: number;
  /** At most this many images per document; the rest are reported in warnings. */
  maxImages: number;
  /** Characters of text the document may yield, each repetition counted (see ParseBudget). */
  maxChars: number;
  /** Of those, the characters earlier steps already read (a PDF's earlier page ranges). */
  charsBefore?: number;
  /** Steps of work (tags, rows, lines, text items) the parser may take before it stops. */
  maxSteps: number;
  /** Pages of a PDF read at most. */
  maxPages: number;
  /** What pdf.js may decompress, per stream, page, step and document. */
  decode: DecodeLimits;
  /** Of the document's decoding budget, what earlier steps spent (a PDF's earlier page ranges). */
  decodedBefore?: number;
}

/**
 * Steps one document may take. A step is one XML tag, sheet row, text line, CSV record or PDF
 * text item; a real document needs a few million at most (a 200,000-cell workbook about 1.5
 * million), and ten million take a few seconds of CPU.
 */
export const MAX_PARSE_STEPS = 10_000_000;

export const DEFAULT_PARSE_LIMITS: ParseLimits = {
  minImageSide: 64,
  maxImages: 50,
  maxChars: MAX_DOCUMENT_CHARS,
  maxSteps: MAX_PARSE_STEPS,
  maxPages: MAX_PDF_PAGES,
  decode: {
    stream: MAX_PDF_STREAM_BYTES,
    page: MAX_PDF_PAGE_DECODED_BYTES,
    step: MAX_PDF_STEP_DECODED_BYTES,
    document: MAX_PDF_DOCUMENT_DECODED_BYTES,
  },
};
