import type { DocType } from '#core/documents/detect-type.ts';
import { MAX_DOCUMENT_CHARS, MAX_DOCUMENT_CHUNKS, MAX_PDF_PAGES } from '#core/limits.ts';
import type { Chunk } from '../chunking/chunk.ts';
import { chunkDocument } from '../chunking/chunk-blocks.ts';
import { charsWarning } from '../parsers/budget.ts';
import { cleanTitle } from '../parsers/document-properties.ts';
import { type DocumentSource, parseDocument } from '../parsers/index.ts';
import { DEFAULT_PARSE_LIMITS, type ExtractedImage, type ParsedDocument, type ParseLimits } from '../parsers/types.ts';

/**
 * Pages of a PDF read per step. Each step holds the file, pdf.js's view of it and one
 * range's text and images, which keeps a 50 MB PDF inside a 128 MB worker.
 */
export const PDF_PAGES_PER_STEP = 100;

/** What one document may yield, whatever its size on disk: the ingest worker's settings. */
export interface DocumentBudget {
  maxChars: number;
  maxChunks: number;
  maxPages: number;
}

export const DEFAULT_DOCUMENT_BUDGET: DocumentBudget = {
  maxChars: MAX_DOCUMENT_CHARS,
  maxChunks: MAX_DOCUMENT_CHUNKS,
  maxPages: MAX_PDF_PAGES,
};

export interface RangeInput {
  type: DocType;
  bytes: Uint8Array;
  /** The collection's chunk_size. */
  chunkSize: number;
  /** A PDF is read from this page, PDF_PAGES_PER_STEP pages at a time; anything else whole. */
  fromPage?: number;
  /** What the document's earlier ranges produced, and what pdf.js decompressed for them. */
  before?: { chunks: number; images: number; decodedBytes?: number };
  source?: Omit<DocumentSource, 'pages'>;
}

export interface RangeResult {
  chunks: Chunk[];
  /** Images not handed to `source.onImage`. */
  images: ExtractedImage[];
  /** What was lost, for the job's `partial` message. */
  warnings: string[];
  /** A PDF's last page read. */
  lastPage?: number;
  /** Bytes pdf.js decompressed for this range: the document's decoding budget spent here. */
  decodedBytes: number;
  /** Nothing is left to read: the last page was read, or the document's budget is spent. */
  extracted: boolean;
  /** Of the first range only: the document's title (its own, else its first heading) and date, where found. */
  context?: { title: string | null; document_date: string | null };
}

/**
 * The parse step of one extract invocation, with no storage, database or queue, so that tests
 * and benchmarks run exactly what the worker runs: parse the document (a PDF one page range)
 * within the document's budget, and chunk it. Characters are capped while parsing, chunks while
 * chunking; a document over either ends here, with a warning, and no later range is queued.
 * Earlier ranges of a PDF count as `chunkSize` characters per chunk they made: an upper bound on
 * what they read, known without reading their rows back.
 */
export async function readRange(
  input: RangeInput,
  budget: DocumentBudget = DEFAULT_DOCUMENT_BUDGET,
  limits: ParseLimits = DEFAULT_PARSE_LIMITS,
): Promise<RangeResult> {
  const before = input.before ?? { chunks: 0, images: 0 };
  const fromPage = input.fromPage ?? 1;
  const pages = input.type === 'pdf' ? { first: fromPage, last: fromPage + PDF_PAGES_PER_STEP - 1 } : undefined;
  const charsBefore = before.chunks * input.chunkSize;
  if (before.chunks > 0 && charsBefore >= budget.maxChars) {
    const lastPage = pages ? { lastPage: fromPage - 1 } : {};
    return { chunks: [], images: [], warnings: [charsWarning(budget.maxChars)], ...lastPage, decodedBytes: 0, extracted: true };
  }

  let handedOver = 0;
  const onImage = input.source?.onImage;
  const parsed = await parseDocument(
    input.type,
    input.bytes,
    {
      ...limits,
      maxImages: Math.max(0, limits.maxImages - before.images),
      maxChars: budget.maxChars,
      charsBefore,
      maxPages: budget.maxPages,
      decodedBefore: before.decodedBytes ?? 0,
    },
    {
      ...input.source,
      pages,
      onImage:
        onImage &&
        ((image) => {
          handedOver++;
          return onImage(image);
        }),
    },
  );

  const room = Math.max(0, budget.maxChunks - before.chunks - handedOver - parsed.images.length);
  const { chunks, truncated } = chunkDocument(parsed.blocks, { chunkSize: input.chunkSize, maxChunks: room });
  const readable = Math.min(parsed.pageCount ?? 0, budget.maxPages);
  // A range may end early, its decoding share spent; the next step reads on from there.
  const lastPage = pages ? Math.min(parsed.lastPage ?? pages.last, readable) : undefined;
  const pagesLeft = lastPage !== undefined && lastPage < readable;
  const full = before.chunks + handedOver + parsed.images.length + chunks.length >= budget.maxChunks;
  const warnings = [...parsed.warnings];
  if (truncated || (full && pagesLeft)) {
    const max = budget.maxChunks.toLocaleString('en-US');
    warnings.push(`The document makes more than ${max} chunks; only the first ${max} were kept`);
  }
  return {
    chunks,
    images: parsed.images,
    warnings,
    ...(lastPage !== undefined ? { lastPage } : {}),
    decodedBytes: parsed.decodedBytes ?? 0,
    extracted: !pagesLeft || truncated || full || parsed.truncated === true,
    ...(fromPage === 1 ? { context: firstRangeContext(parsed) } : {}),
  };
}

/** The title the file gives itself, else its first heading; and its date. */
function firstRangeContext(parsed: ParsedDocument): NonNullable<RangeResult['context']> {
  const heading = parsed.blocks.find((block) => block.kind === 'heading');
  return { title: parsed.title ?? cleanTitle(heading?.text) ?? null, document_date: parsed.date ?? null };
}
