import { getResolvedPDFJS } from 'unpdf';
import type { PDFDocumentLoadingTask, PDFDocumentProxy, PDFPageProxy } from 'unpdf/pdfjs';
import { ParseBudget } from './budget.ts';
import { type DocumentProperties, pdfProperties } from './document-properties.ts';
import { assignHeadingLevels, type PendingBlock, resolveHyphenBreaks } from './pdf-blocks.ts';
import { DecodeBudget, withDecodeBudget } from './pdf-decode-budget.ts';
import { decodeFailure, decodeWarnings } from './pdf-decode-messages.ts';
import { type ImageBudget, MAX_DECODED_IMAGE_PIXELS, type OperatorList, pageImages } from './pdf-images.ts';
import { type Matrix, messageOf, type Pdfjs, pageFailure, plural, TimeoutError, withTimeout } from './pdf-support.ts';
import { pageText } from './pdf-text.ts';
import { DEFAULT_PARSE_LIMITS, type ExtractedImage, type ParsedDocument, ParseError, type ParseLimits } from './types.ts';

/** Time limits that keep one hostile PDF from holding the worker; tests shorten them. */
export interface PdfParseOptions {
  /** Opening the document (header, xref, page tree). */
  openTimeoutMs: number;
  /** Text, operator list and images of one page. */
  pageTimeoutMs: number;
  /**
   * Only these pages (1-based, inclusive; `last` past the end means to the end), so a long
   * PDF is read in several bounded steps. A range with no content is not an error.
   */
  pages?: { first: number; last: number };
  /** The caller is done with `bytes`: pdf.js may take them instead of a copy (one less copy of a 50 MB file). */
  transferBytes?: boolean;
  /** Takes each image as its page is read, instead of keeping them all to the end (20 photos are 40 MB of PNG). */
  onImage?: (image: ExtractedImage) => Promise<void>;
}

const DEFAULT_OPTIONS: PdfParseOptions = { openTimeoutMs: 20_000, pageTimeoutMs: 20_000 };

/**
 * Parses a PDF into text blocks (reading order, headings, tables kept by row) and images (figures, and
 * the scan of each page that has no text layer). Works in Workers: pdf.js runs in-thread, without eval,
 * network fetches or canvas.
 */
export async function parsePdf(
  bytes: Uint8Array,
  limits: ParseLimits = DEFAULT_PARSE_LIMITS,
  options: Partial<PdfParseOptions> = {},
): Promise<ParsedDocument> {
  const opts = { ...DEFAULT_OPTIONS, ...options };
  if (!(bytes instanceof Uint8Array)) throw new ParseError('corrupt', 'The PDF could not be read: no file content was given');
  if (bytes.length === 0) throw new ParseError('empty', 'The PDF file is empty');

  let pdfjs: Pdfjs;
  try {
    pdfjs = await getResolvedPDFJS();
  } catch (error) {
    throw new Error(`The PDF reader could not be loaded: ${messageOf(error)}`);
  }

  // pdf.js may transfer (detach) the buffer it is given; the caller keeps its bytes unless it gives them up.
  const data = opts.transferBytes ? bytes : bytes.slice();
  // Every byte pdf.js decompresses for this document, from here on, is charged to this budget.
  const decoding = new DecodeBudget(limits.decode, limits.decodedBefore ?? 0);
  return withDecodeBudget(decoding, () => openAndParse(pdfjs, data, limits, opts, decoding));
}

async function openAndParse(
  pdfjs: Pdfjs,
  data: Uint8Array,
  limits: ParseLimits,
  opts: PdfParseOptions,
  decoding: DecodeBudget,
): Promise<ParsedDocument> {
  let task: PDFDocumentLoadingTask | undefined;
  try {
    let pdf: PDFDocumentProxy;
    try {
      task = pdfjs.getDocument({
        data,
        isEvalSupported: false,
        disableFontFace: true,
        useSystemFonts: true,
        useWorkerFetch: false,
        useWasm: false,
        isOffscreenCanvasSupported: false,
        isImageDecoderSupported: false,
        disableAutoFetch: true,
        disableStream: true,
        enableXfa: false,
        maxImageSize: MAX_DECODED_IMAGE_PIXELS,
        verbosity: 0,
      });
      pdf = await withTimeout(task.promise, opts.openTimeoutMs, 'opening the PDF');
    } catch (error) {
      throw decodeFailure(decoding) ?? openError(error);
    }
    return await parseDocument(pdfjs, pdf, limits, opts, decoding);
  } finally {
    // Frees the document, its pages and pdf.js's in-thread worker; must not mask the real outcome.
    await task?.destroy().catch(() => undefined);
  }
}

function openError(error: unknown): ParseError {
  if (error instanceof ParseError) return error;
  const name = error instanceof Error ? error.name : '';
  if (name === 'PasswordException') return new ParseError('encrypted', 'The PDF is encrypted with a password');
  if (error instanceof TimeoutError) return new ParseError('corrupt', 'The PDF could not be read: opening it took too long');
  return new ParseError('corrupt', 'The file is not a readable PDF: it is damaged or not a PDF at all');
}

interface PageResult {
  blocks: PendingBlock[];
  images: ExtractedImage[];
  /** Text items on the page: the steps its reading took. */
  items: number;
}

async function parseDocument(
  pdfjs: Pdfjs,
  pdf: PDFDocumentProxy,
  limits: ParseLimits,
  opts: PdfParseOptions,
  decoding: DecodeBudget,
): Promise<ParsedDocument> {
  const pageCount = pdf.numPages;
  if (pageCount < 1) throw new ParseError('empty', 'The PDF has no pages');
  // Pages past limits.maxPages are not read; the range that reaches the cap says so.
  const readable = Math.min(pageCount, limits.maxPages);
  const first = Math.max(1, opts.pages?.first ?? 1);
  const last = Math.min(readable, opts.pages?.last ?? pageCount);
  const whole = first === 1 && last === readable;
  const warnings: string[] = [];
  if (readable < pageCount && first <= readable && last === readable) {
    warnings.push(`Only the first ${readable} of the PDF's ${pageCount} pages were read`);
  }
  const docBudget = new ParseBudget(limits);
  const blocks: PendingBlock[] = [];
  const images: ExtractedImage[] = [];
  const budget: ImageBudget = { limits, kept: 0, skippedFigures: 0, skippedScans: 0, seen: new Set() };
  const fonts = new Map<string, boolean>();
  let failedPages = 0;
  let imageCount = 0;
  // A range whose decoding share ran out before its last page: where it stopped.
  let stoppedAt: number | undefined;
  // What was decoded when pdf.js's caches were last emptied.
  let decodedAtCleanup = decoding.stepBytes;

  await docBudget.untilAsync(async () => {
    for (let pageNumber = first; pageNumber <= last; pageNumber++) {
      if (decoding.documentSpent) break;
      decoding.startPage(pageNumber);
      let page: PDFPageProxy | undefined;
      let found: ExtractedImage[] = [];
      let read: PendingBlock[] = [];
      let items = 0;
      try {
        const result = await withTimeout(
          (async () => {
            page = await pdf.getPage(pageNumber);
            return parsePage(pdfjs, page, pageNumber, budget, fonts, warnings, decoding);
          })(),
          opts.pageTimeoutMs,
          `reading page ${pageNumber}`,
        );
        read = result.blocks;
        found = result.images;
        items = result.items;
      } catch (error) {
        failedPages++;
        // A page the decoding budget stopped is the budget's to explain (decodeWarnings).
        if (!decoding.refusedOnPage) {
          warnings.push(`Page ${pageNumber} could not be read: ${pageFailure(error, `page ${pageNumber}`)}`);
        }
      } finally {
        // Drops the page's decoded images and operator list; the next page starts from a clean slate.
        try {
          page?.cleanup();
        } catch {
          // A page still busy after a timeout keeps its resources until the document is destroyed.
        }
      }
      // Outside the page's try: a failure to take an image (storage down) is the caller's, not the page's.
      imageCount += found.length;
      if (opts.onImage) for (const image of found) await opts.onImage(image);
      else images.push(...found);
      // The page's text counts against the document's budget; what does not fit is cut, and reading stops.
      for (const block of read) {
        block.text = docBudget.take(block.text);
        if (block.text !== '') blocks.push(block);
      }
      docBudget.work(items);
      if (decoding.documentSpent || (decoding.stepSpent && pageNumber < last)) {
        stoppedAt = pageNumber;
        break;
      }
      // pdf.js keeps what pages share (fonts, repeated images) until the document is cleaned up, and a
      // page's budget ends with the page: once a page's worth has been decoded, what is kept goes too.
      if (decoding.stepBytes - decodedAtCleanup >= limits.decode.page) {
        await pdf.cleanup().catch(() => undefined);
        decodedAtCleanup = decoding.stepBytes;
      }
    }
  });

  if (budget.skippedFigures > 0) {
    warnings.push(
      `Only the first ${limits.maxImages} images were kept; ${budget.skippedFigures} more figure${plural(budget.skippedFigures)} ${budget.skippedFigures === 1 ? 'was' : 'were'} skipped`,
    );
  }
  if (budget.skippedScans > 0) {
    warnings.push(
      `${budget.skippedScans} scanned page${plural(budget.skippedScans)} had no text layer and ${budget.skippedScans === 1 ? 'was' : 'were'} skipped because the image limit (${limits.maxImages}) was reached`,
    );
  }

  if (blocks.length === 0 && imageCount === 0 && whole) {
    const failure = decodeFailure(decoding);
    if (failure) throw failure;
    if (failedPages === readable) {
      throw new ParseError('corrupt', `The PDF is damaged: none of its ${pageCount} page${plural(pageCount)} could be read`);
    }
    throw new ParseError('empty', 'The PDF contains no readable text or images');
  }

  warnings.push(...decodeWarnings(decoding));
  const parsed = docBudget.finish({
    blocks: resolveHyphenBreaks(assignHeadingLevels(blocks)),
    images,
    warnings,
    pageCount,
    decodedBytes: decoding.stepBytes,
    ...(stoppedAt !== undefined ? { lastPage: stoppedAt } : {}),
    ...(await infoProperties(pdf)),
  });
  return decoding.documentSpent ? { ...parsed, truncated: true } : parsed;
}

const INFO_TIMEOUT_MS = 5_000;

/** The Info dictionary's title and date; a PDF whose Info cannot be read has neither, and is read as before. */
async function infoProperties(pdf: PDFDocumentProxy): Promise<DocumentProperties> {
  try {
    return pdfProperties(await withTimeout(pdf.getMetadata(), INFO_TIMEOUT_MS, 'reading the Info dictionary'));
  } catch {
    return {};
  }
}

async function parsePage(
  pdfjs: Pdfjs,
  page: PDFPageProxy,
  pageNumber: number,
  budget: ImageBudget,
  fonts: Map<string, boolean>,
  warnings: string[],
  decoding: DecodeBudget,
): Promise<PageResult> {
  const content = await page.getTextContent({ includeMarkedContent: false });
  // The operator list loads the page's fonts (whose names tell bold apart) and lists its images.
  let operators: OperatorList | undefined;
  try {
    operators = await page.getOperatorList();
  } catch (error) {
    if (!decoding.refusedOnPage) {
      warnings.push(`Images on page ${pageNumber} could not be read: ${pageFailure(error, `images of page ${pageNumber}`)}`);
    }
  }

  const viewport = page.getViewport({ scale: 1 });
  const isBold = (fontName: string) => fontIsBold(page, fontName, fonts);
  const text = pageText(content, viewport.transform as Matrix, isBold, pageNumber);

  const images = operators ? await pageImages(pdfjs, page, operators, pageNumber, text.visibleChars, budget, warnings) : [];
  return { blocks: text.blocks, images, items: content.items.length };
}

function fontIsBold(page: PDFPageProxy, fontName: string, cache: Map<string, boolean>): boolean {
  const cached = cache.get(fontName);
  if (cached !== undefined) return cached;
  let bold = false;
  try {
    const objs = fontName.startsWith('g_') ? page.commonObjs : page.objs;
    if (objs.has(fontName)) {
      const font = objs.get(fontName) as { name?: unknown; bold?: unknown; black?: unknown } | null;
      const name = typeof font?.name === 'string' ? font.name : '';
      bold = font?.bold === true || font?.black === true || /bold|black|heavy|demi|semibold|medi|cmbx|[-,]bd\b/i.test(name);
    }
  } catch {
    // Unknown font: treat as regular.
  }
  // Font ids are per document for g_ fonts and per page otherwise; only the former are safe to cache.
  if (fontName.startsWith('g_')) cache.set(fontName, bold);
  return bold;
}
