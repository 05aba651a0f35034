import { getResolvedPDFJS } from 'unpdf';
import type { PDFDocumentLoadingTask, PDFDocumentProxy, PDFPageProxy } from 'unpdf/pdfjs';
import { crc32, encodePng, type PngChannels } from './png.ts';
import {
  type Block,
  DEFAULT_PARSE_LIMITS,
  type ExtractedImage,
  type ParsedDocument,
  ParseError,
  type ParseLimits,
} from './types.ts';

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

// pdf.js decodes every image in full before we see it; above this it skips the image, which keeps a
// 128 MB worker alive (16 MP of RGBA is already 64 MB).
const MAX_DECODED_IMAGE_PIXELS = 16_000_000;
// Larger images are box-downscaled before PNG encoding: enough for OCR of an A4 page at 300 dpi.
const MAX_OUTPUT_PIXELS = 9_000_000;
// A page with fewer visible characters than this has no real text layer (a stray page number at most).
const SCANNED_MAX_TEXT_CHARS = 30;
// The image must cover this share of the page to stand for the page.
const SCANNED_MIN_COVERAGE = 0.25;

type Pdfjs = Awaited<ReturnType<typeof getResolvedPDFJS>>;
type TextContent = Awaited<ReturnType<PDFPageProxy['getTextContent']>>;
type Matrix = [number, number, number, number, number, number];

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

  let task: PDFDocumentLoadingTask | undefined;
  try {
    let pdf: PDFDocumentProxy;
    try {
      task = pdfjs.getDocument({
        // pdf.js may transfer (detach) the buffer it is given; the caller keeps its bytes unless it gives them up.
        data: opts.transferBytes ? bytes : bytes.slice(),
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
      throw openError(error);
    }
    return await parseDocument(pdfjs, pdf, limits, opts);
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

// ---------------------------------------------------------------------------------------------------------
// Document

interface PageResult {
  blocks: PendingBlock[];
  images: ExtractedImage[];
}

/** A block whose heading level is settled once every page's heading sizes are known. */
interface PendingBlock extends Block {
  size: number;
}

async function parseDocument(
  pdfjs: Pdfjs,
  pdf: PDFDocumentProxy,
  limits: ParseLimits,
  opts: PdfParseOptions,
): Promise<ParsedDocument> {
  const pageCount = pdf.numPages;
  if (pageCount < 1) throw new ParseError('empty', 'The PDF has no pages');
  const first = Math.max(1, opts.pages?.first ?? 1);
  const last = Math.min(pageCount, opts.pages?.last ?? pageCount);
  const whole = first === 1 && last === pageCount;
  const warnings: string[] = [];
  const blocks: PendingBlock[] = [];
  const images: ExtractedImage[] = [];
  const budget: ImageBudget = { limits, kept: 0, skippedFigures: 0, skippedScans: 0, seen: new Set() };
  const fonts = new Map<string, boolean>();
  let failedPages = 0;
  let imageCount = 0;

  for (let pageNumber = first; pageNumber <= last; pageNumber++) {
    let page: PDFPageProxy | undefined;
    let found: ExtractedImage[] = [];
    try {
      const result = await withTimeout(
        (async () => {
          page = await pdf.getPage(pageNumber);
          return parsePage(pdfjs, page, pageNumber, budget, fonts, warnings);
        })(),
        opts.pageTimeoutMs,
        `reading page ${pageNumber}`,
      );
      blocks.push(...result.blocks);
      found = result.images;
    } catch (error) {
      failedPages++;
      warnings.push(`Page ${pageNumber} could not be read: ${messageOf(error)}`);
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
  }

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
    if (failedPages === pageCount) {
      throw new ParseError('corrupt', `The PDF is damaged: none of its ${pageCount} page${plural(pageCount)} could be read`);
    }
    throw new ParseError('empty', 'The PDF contains no readable text or images');
  }

  return { blocks: resolveHyphenBreaks(assignHeadingLevels(blocks)), images, warnings, pageCount };
}

async function parsePage(
  pdfjs: Pdfjs,
  page: PDFPageProxy,
  pageNumber: number,
  budget: ImageBudget,
  fonts: Map<string, boolean>,
  warnings: string[],
): Promise<PageResult> {
  const content = await page.getTextContent({ includeMarkedContent: false });
  // The operator list loads the page's fonts (whose names tell bold apart) and lists its images.
  let operators: OperatorList | undefined;
  try {
    operators = await page.getOperatorList();
  } catch (error) {
    warnings.push(`Images on page ${pageNumber} could not be read: ${messageOf(error)}`);
  }

  const viewport = page.getViewport({ scale: 1 });
  const isBold = (fontName: string) => fontIsBold(page, fontName, fonts);
  const text = pageText(content, viewport.transform as Matrix, isBold, pageNumber);

  const images = operators ? await pageImages(pdfjs, page, operators, pageNumber, text.visibleChars, budget, warnings) : [];
  return { blocks: text.blocks, images };
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

// ---------------------------------------------------------------------------------------------------------
// Text: items → fragments → columns → lines → blocks

/** A run of text pieces that sit next to each other on one baseline, in content-stream order. */
interface Fragment {
  text: string;
  x0: number;
  x1: number;
  top: number;
  bottom: number;
  baseline: number;
  /** Font size of the largest piece: the fragment's box follows it. */
  size: number;
  /** Box of every piece, superscripts and subscripts included. */
  inkTop: number;
  inkBottom: number;
  chars: number;
  boldChars: number;
  /** Characters per rounded font size, to find the fragment's dominant size. */
  sizeChars: Map<number, number>;
  order: number;
}

interface Line {
  cells: Fragment[];
  x0: number;
  x1: number;
  top: number;
  bottom: number;
  inkTop: number;
  inkBottom: number;
  baseline: number;
  size: number;
  chars: number;
  boldChars: number;
}

interface PageText {
  blocks: PendingBlock[];
  visibleChars: number;
}

// Word spacing in justified text stays under about an em; table cells and column gutters are wider.
const CELL_GAP_EM = 1.2;

function pageText(
  content: TextContent,
  viewTransform: Matrix,
  isBold: (fontName: string) => boolean,
  pageNumber: number,
): PageText {
  const fragments: Fragment[] = [];
  const rotated: string[][] = [[]];
  const seen = new Set<string>();
  let visibleChars = 0;
  let current: Fragment | undefined;
  let order = 0;

  for (const item of content.items) {
    if (!('str' in item) || !Array.isArray(item.transform)) continue;
    const raw = item.str.replace(/\s+/g, ' ');
    const str = raw.trim();
    if (str === '') continue;
    const [a, b, c, d, e, f] = multiply(viewTransform, item.transform as Matrix);
    const size = Math.hypot(c, d);
    if (!(size > 0.5) || !Number.isFinite(e) || !Number.isFinite(f)) continue;
    visibleChars += str.replace(/\s/g, '').length;

    // Upright text only (device space has y pointing down, so d < 0); vertical or rotated runs (margin
    // stamps, axis labels) keep content order.
    if (!(a > 0 && Math.abs(b) < 0.05 * a && Math.abs(c) < 0.05 * size && d < 0)) {
      rotated[rotated.length - 1]?.push(str);
      if (item.hasEOL) rotated.push([]);
      continue;
    }
    const x0 = e;
    const x1 = e + Math.max(0, item.width);
    // Fake bold draws the same string twice a hair apart.
    const key = `${str}@${Math.round(x0)},${Math.round(f)}`;
    if (seen.has(key)) continue;
    seen.add(key);

    const bold = isBold(item.fontName);
    const piece = { text: str, x0, x1, baseline: f, size, bold, leadingSpace: raw.startsWith(' ') };
    if (current && continues(current, piece)) {
      appendPiece(current, piece);
    } else {
      current = newFragment(piece, order++);
      fragments.push(current);
    }
  }

  const blocks: PendingBlock[] = [];
  if (fragments.length > 0) {
    const body = bodyStyle(fragments);
    for (const region of readingOrder(fragments, 0)) {
      const next = regionBlocks(region, body, pageNumber);
      const last = blocks[blocks.length - 1];
      const first = next[0];
      // A paragraph that runs on from the foot of one column to the head of the next.
      if (
        last?.kind === 'paragraph' &&
        first?.kind === 'paragraph' &&
        !/[.!?:;]["'”’)\]]?$/.test(last.text) &&
        /^\p{Ll}/u.test(first.text)
      ) {
        last.text = joinLine(last.text, first.text);
        next.shift();
      }
      blocks.push(...next);
    }
  }
  for (const run of rotated) {
    const text = run.join(' ').replace(/\s+/g, ' ').trim();
    if (/\p{L}|\p{N}/u.test(text)) blocks.push({ kind: 'paragraph', text, page: pageNumber, size: 0 });
  }
  return { blocks, visibleChars };
}

interface Piece {
  text: string;
  x0: number;
  x1: number;
  baseline: number;
  size: number;
  bold: boolean;
  leadingSpace: boolean;
}

function newFragment(p: Piece, order: number): Fragment {
  const chars = p.text.length;
  return {
    text: p.text,
    x0: p.x0,
    x1: p.x1,
    top: p.baseline - 0.8 * p.size,
    bottom: p.baseline + 0.2 * p.size,
    inkTop: p.baseline - 0.8 * p.size,
    inkBottom: p.baseline + 0.2 * p.size,
    baseline: p.baseline,
    size: p.size,
    chars,
    boldChars: p.bold ? chars : 0,
    sizeChars: new Map([[roundSize(p.size), chars]]),
    order,
  };
}

function continues(f: Fragment, p: Piece): boolean {
  const top = p.baseline - 0.8 * p.size;
  const bottom = p.baseline + 0.2 * p.size;
  if (verticalOverlap(f.top, f.bottom, top, bottom) < 0.5 * Math.min(f.size, p.size)) return false;
  const gap = p.x0 - f.x1;
  const em = Math.max(f.size, p.size);
  return gap > -0.5 * em && gap <= CELL_GAP_EM * em;
}

function appendPiece(f: Fragment, p: Piece): void {
  const gap = p.x0 - f.x1;
  const em = Math.min(f.size, p.size);
  if (p.leadingSpace || gap > 0.15 * em) f.text += ' ';
  f.text += p.text;
  f.x1 = Math.max(f.x1, p.x1);
  f.inkTop = Math.min(f.inkTop, p.baseline - 0.8 * p.size);
  f.inkBottom = Math.max(f.inkBottom, p.baseline + 0.2 * p.size);
  f.chars += p.text.length;
  if (p.bold) f.boldChars += p.text.length;
  const bucket = roundSize(p.size);
  f.sizeChars.set(bucket, (f.sizeChars.get(bucket) ?? 0) + p.text.length);
  if (p.size > f.size) {
    // Superscripts and subscripts ride along; the box follows the main text.
    f.size = p.size;
    f.baseline = p.baseline;
    f.top = p.baseline - 0.8 * p.size;
    f.bottom = p.baseline + 0.2 * p.size;
  }
}

interface BodyStyle {
  size: number;
  bold: boolean;
}

/** The page's body text: the font size that carries the most characters, and whether it is bold. */
function bodyStyle(fragments: Fragment[]): BodyStyle {
  const bySize = new Map<number, { chars: number; bold: number }>();
  for (const f of fragments) {
    const size = dominantSize(f.sizeChars);
    const entry = bySize.get(size) ?? { chars: 0, bold: 0 };
    entry.chars += f.chars;
    entry.bold += f.boldChars;
    bySize.set(size, entry);
  }
  let best = { size: 0, chars: -1, bold: 0 };
  for (const [size, entry] of bySize) if (entry.chars > best.chars) best = { size, ...entry };
  return { size: best.size, bold: best.bold > 0.6 * best.chars };
}

/**
 * Splits the page into regions in reading order. A vertical gutter that almost no fragment crosses
 * divides columns; fragments that do cross it (titles, wide captions) cut the page into bands, so a
 * two-column body under a full-width title reads title, left column, right column. Tables are not
 * columns: their cells are short and their content stream alternates left and right row by row.
 */
function readingOrder(fragments: Fragment[], depth: number): Fragment[][] {
  if (depth > 6 || fragments.length < 2) return [fragments];
  const gutter = findGutter(fragments);
  if (!gutter) return [fragments];

  const crossing = fragments.filter((f) => f.x0 < gutter.end && f.x1 > gutter.start);
  // Pieces of a full-width line that happen to sit on one side belong with that line.
  const spans = (f: Fragment) =>
    crossing.some((g) => g === f || verticalOverlap(g.top, g.bottom, f.top, f.bottom) >= 0.5 * Math.min(g.size, f.size));
  const sorted = [...fragments].sort((p, q) => p.top - q.top || p.x0 - q.x0);
  const bands: { spanning: boolean; fragments: Fragment[] }[] = [];
  for (const f of sorted) {
    const spanning = spans(f);
    const last = bands[bands.length - 1];
    if (last && last.spanning === spanning) last.fragments.push(f);
    else bands.push({ spanning, fragments: [f] });
  }

  const regions: Fragment[][] = [];
  const middle = (gutter.start + gutter.end) / 2;
  // Bands that are not split into columns stay together, so a paragraph whose ragged lines
  // sometimes reach into the gutter is not cut into pieces.
  let single: Fragment[] = [];
  const flushSingle = () => {
    if (single.length === 0) return;
    regions.push(...(single.length < fragments.length ? readingOrder(single, depth + 1) : [single]));
    single = [];
  };
  for (const band of bands) {
    const left = band.spanning ? [] : band.fragments.filter((f) => (f.x0 + f.x1) / 2 < middle);
    const right = band.spanning ? [] : band.fragments.filter((f) => (f.x0 + f.x1) / 2 >= middle);
    if (left.length > 0 && right.length > 0 && areColumns(left, right)) {
      flushSingle();
      regions.push(...readingOrder(left, depth + 1), ...readingOrder(right, depth + 1));
    } else {
      single.push(...band.fragments);
    }
  }
  flushSingle();
  return regions;
}

interface Gutter {
  start: number;
  end: number;
}

function findGutter(fragments: Fragment[]): Gutter | undefined {
  let minX = Number.POSITIVE_INFINITY;
  let maxX = Number.NEGATIVE_INFINITY;
  for (const f of fragments) {
    minX = Math.min(minX, f.x0);
    maxX = Math.max(maxX, f.x1);
  }
  const width = Math.ceil(maxX - minX);
  if (!(width > 0) || width > 20_000) return undefined;
  // How many fragments cover each 1-unit column of the region.
  const delta = new Int32Array(width + 2);
  for (const f of fragments) {
    const from = Math.max(0, Math.floor(f.x0 - minX));
    const to = Math.min(width + 1, Math.ceil(f.x1 - minX));
    delta[from] = (delta[from] ?? 0) + 1;
    delta[to] = (delta[to] ?? 0) - 1;
  }
  const cover = new Int32Array(width + 1);
  let running = 0;
  for (let x = 0; x <= width; x++) {
    running += delta[x] ?? 0;
    cover[x] = running;
  }

  const sizes = fragments.map((f) => f.size).sort((p, q) => p - q);
  const em = sizes[Math.floor(sizes.length / 2)] ?? 10;
  const minWidth = Math.max(3, 0.9 * em);
  // Full-width lines may cross a gutter; a handful of them, not a whole single-column page.
  const allowed = Math.floor(fragments.length * 0.12);

  let best: Gutter | undefined;
  let bestWidth = 0;
  let x = 0;
  while (x <= width) {
    if ((cover[x] ?? 0) > allowed) {
      x++;
      continue;
    }
    const runStart = x;
    let low = Number.POSITIVE_INFINITY;
    while (x <= width && (cover[x] ?? 0) <= allowed) {
      low = Math.min(low, cover[x] ?? 0);
      x++;
    }
    const runEnd = x;
    // Only gaps with text on both sides divide anything.
    if (runStart === 0 || runEnd > width) continue;
    // The gutter proper is the least-covered stretch of the gap; lines that cross it span both sides.
    let s = runStart;
    while (s < runEnd) {
      if ((cover[s] ?? 0) !== low) {
        s++;
        continue;
      }
      const coreStart = s;
      while (s < runEnd && (cover[s] ?? 0) === low) s++;
      const coreWidth = s - coreStart;
      if (coreWidth >= minWidth && coreWidth > bestWidth) {
        bestWidth = coreWidth;
        best = { start: minX + coreStart, end: minX + s };
      }
    }
  }
  return best;
}

function areColumns(left: Fragment[], right: Fragment[]): boolean {
  const overlap = verticalOverlap(
    Math.min(...left.map((f) => f.top)),
    Math.max(...left.map((f) => f.bottom)),
    Math.min(...right.map((f) => f.top)),
    Math.max(...right.map((f) => f.bottom)),
  );
  // One side wholly above the other reads fine top to bottom.
  if (overlap <= 0) return false;
  const leftSide = sideShape(left);
  const rightSide = sideShape(right);
  // Columns hold prose; a side of short lines is table cells or labels, which read best row by row.
  if (leftSide.chars < MIN_COLUMN_LINE_CHARS || rightSide.chars < MIN_COLUMN_LINE_CHARS) return false;
  const sides = new Map<Fragment, number>();
  for (const f of left) sides.set(f, 0);
  for (const f of right) sides.set(f, 1);
  const inOrder = [...left, ...right].sort((p, q) => p.order - q.order);
  let switches = 0;
  for (let i = 1; i < inOrder.length; i++) {
    if (sides.get(inOrder[i] as Fragment) !== sides.get(inOrder[i - 1] as Fragment)) switches++;
  }
  if (switches <= Math.max(2, 0.25 * Math.min(left.length, right.length))) return true;
  // Written row by row across both sides: still columns if both are long lines that fill their side.
  return leftSide.chars >= 20 && rightSide.chars >= 20 && leftSide.fill >= 0.45 && rightSide.fill >= 0.45;
}

// Even narrow newspaper columns hold 25 or more characters a line.
const MIN_COLUMN_LINE_CHARS = 15;

/** Median characters per line, and median share of the side's width its lines span. */
function sideShape(fragments: Fragment[]): { chars: number; fill: number } {
  const lines = regionLines(fragments);
  const x0 = Math.min(...fragments.map((f) => f.x0));
  const x1 = Math.max(...fragments.map((f) => f.x1));
  const width = x1 - x0;
  return {
    chars: medianOf(lines.map((l) => l.chars)),
    fill: width > 0 ? medianOf(lines.map((l) => (l.x1 - l.x0) / width)) : 1,
  };
}

function regionLines(fragments: Fragment[]): Line[] {
  const sorted = [...fragments].sort((p, q) => p.baseline - q.baseline || p.x0 - q.x0);
  const groups: { ref: Fragment; members: Fragment[] }[] = [];
  for (const f of sorted) {
    const group = groups[groups.length - 1];
    if (group && verticalOverlap(group.ref.top, group.ref.bottom, f.top, f.bottom) >= 0.5 * Math.min(group.ref.size, f.size)) {
      group.members.push(f);
      if (f.size > group.ref.size) group.ref = f;
    } else {
      groups.push({ ref: f, members: [f] });
    }
  }
  return groups.map(({ ref, members }) => {
    members.sort((p, q) => p.x0 - q.x0);
    const cells: Fragment[] = [];
    for (const f of members) {
      const last = cells[cells.length - 1];
      if (last && f.x0 - last.x1 <= CELL_GAP_EM * Math.max(last.size, f.size)) {
        cells[cells.length - 1] = mergeFragments(last, f);
      } else {
        cells.push(f);
      }
    }
    const sizeChars = new Map<number, number>();
    for (const f of members) for (const [s, n] of f.sizeChars) sizeChars.set(s, (sizeChars.get(s) ?? 0) + n);
    return {
      cells,
      x0: Math.min(...cells.map((c) => c.x0)),
      x1: Math.max(...cells.map((c) => c.x1)),
      top: ref.top,
      bottom: ref.bottom,
      inkTop: Math.min(...members.map((f) => f.inkTop)),
      inkBottom: Math.max(...members.map((f) => f.inkBottom)),
      baseline: ref.baseline,
      size: dominantSize(sizeChars),
      chars: members.reduce((n, f) => n + f.chars, 0),
      boldChars: members.reduce((n, f) => n + f.boldChars, 0),
    };
  });
}

function mergeFragments(a: Fragment, b: Fragment): Fragment {
  const gap = b.x0 - a.x1;
  const sizeChars = new Map(a.sizeChars);
  for (const [s, n] of b.sizeChars) sizeChars.set(s, (sizeChars.get(s) ?? 0) + n);
  const main = b.size > a.size ? b : a;
  return {
    text: gap > 0.15 * Math.min(a.size, b.size) ? `${a.text} ${b.text}` : a.text + b.text,
    x0: Math.min(a.x0, b.x0),
    x1: Math.max(a.x1, b.x1),
    top: main.top,
    bottom: main.bottom,
    inkTop: Math.min(a.inkTop, b.inkTop),
    inkBottom: Math.max(a.inkBottom, b.inkBottom),
    baseline: main.baseline,
    size: main.size,
    chars: a.chars + b.chars,
    boldChars: a.boldChars + b.boldChars,
    sizeChars,
    order: Math.min(a.order, b.order),
  };
}

// Bullets, and numbers or lowercase letters or roman numerals closed by '.' or ')'; not capital initials ("A. Smith").
const LIST_MARKER = /^(?:[•◦▪▫‣⁃●○■□➢►✓✔∙·–—*-]\s|\(?(?:\d{1,3}|[a-z]|[ivx]{1,5}|[IVX]{1,5})[.)]\s)/u;

function regionBlocks(fragments: Fragment[], body: BodyStyle, pageNumber: number): PendingBlock[] {
  const lines = regionLines(fragments);
  if (lines.length === 0) return [];
  // Consecutive lines with several cells form a table; a lone one is ordinary text with wide spaces.
  const tabular = lines.map(
    (line, i) => line.cells.length >= 2 && ((lines[i - 1]?.cells.length ?? 0) >= 2 || (lines[i + 1]?.cells.length ?? 0) >= 2),
  );

  const left = modeOf(lines.filter((_, i) => !tabular[i]).map((l) => Math.round(l.x0))) ?? Math.min(...lines.map((l) => l.x0));
  const right = Math.max(...lines.map((l) => l.x1));
  const pitches: number[] = [];
  for (let i = 1; i < lines.length; i++) {
    const prev = lines[i - 1] as Line;
    const cur = lines[i] as Line;
    if (!tabular[i] && !tabular[i - 1] && sameSize(prev.size, cur.size)) pitches.push(cur.baseline - prev.baseline);
  }
  const pitch = pitches.length >= 2 ? medianOf(pitches) : undefined;

  const blocks: PendingBlock[] = [];
  let group: Line[] = [];
  const flush = () => {
    if (group.length > 0) blocks.push(textBlock(group, body, pageNumber));
    group = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as Line;
    if (tabular[i]) {
      flush();
      const text = line.cells.map((c) => c.text.trim()).join(' | ');
      blocks.push({ kind: 'table_row', text, page: pageNumber, size: line.size });
      continue;
    }
    const prev = group[group.length - 1];
    if (prev && startsNewBlock(prev, line, lines[i + 1], { left, right, pitch })) flush();
    group.push(line);
  }
  flush();
  return blocks.filter((b) => b.text !== '');
}

interface RegionShape {
  left: number;
  right: number;
  pitch: number | undefined;
}

function startsNewBlock(prev: Line, cur: Line, next: Line | undefined, region: RegionShape): boolean {
  const em = Math.max(prev.size, cur.size);
  const step = cur.baseline - prev.baseline;
  if (step <= 0) return true;
  const usual = region.pitch ?? 1.2 * em;
  // Extra space between lines starts a paragraph, unless it is the leading TeX adds around
  // superscripts and subscripts: then the ink of the two lines still nearly touches.
  const inkGap = cur.inkTop - prev.inkBottom;
  if (step > Math.max(usual, 1.1 * em) * 1.35 && inkGap > Math.max(usual - em, 0.1 * em) + 0.35 * em) return true;
  if (!sameSize(prev.size, cur.size)) return true;
  if (isAllBold(prev) !== isAllBold(cur)) return true;
  const text = lineText(cur);
  if (LIST_MARKER.test(text)) return true;
  // First-line indent, as in typeset paragraphs without spacing between them.
  const indent = cur.x0 - region.left;
  if (
    indent >= 0.7 * cur.size &&
    indent <= 5 * cur.size &&
    Math.abs(prev.x0 - region.left) < 0.5 * cur.size &&
    next !== undefined &&
    Math.abs(next.x0 - region.left) < 0.5 * cur.size
  ) {
    return true;
  }
  // A short line that ends a sentence ends its paragraph.
  const width = region.right - region.left;
  return width > 0 && prev.x1 < region.right - 0.25 * width && /[.!?:]["'”’)\]]?$/.test(lineText(prev));
}

function textBlock(lines: Line[], body: BodyStyle, pageNumber: number): PendingBlock {
  let text = '';
  for (const line of lines) text = joinLine(text, lineText(line));
  text = text.replace(/\s+/g, ' ').trim();
  const sizeChars = new Map<number, number>();
  for (const l of lines) sizeChars.set(l.size, (sizeChars.get(l.size) ?? 0) + l.chars);
  const size = dominantSize(sizeChars);
  const first = lines[0] as Line;
  const kind: Block['kind'] = LIST_MARKER.test(lineText(first)) ? 'list_item' : 'paragraph';
  if (kind === 'paragraph' && isHeading(text, lines, size, body)) return { kind: 'heading', text, page: pageNumber, size };
  return { kind, text, page: pageNumber, size };
}

// Marks a line-end hyphen dropped before a lowercase word; settled once the whole document is known.
const HYPHEN_BREAK = '\u{F0000}';

function joinLine(text: string, next: string): string {
  if (text === '') return next;
  if (/\p{L}[-\u00ad\u2010]$/u.test(text) && /^\p{Ll}/u.test(next)) return text.slice(0, -1) + HYPHEN_BREAK + next;
  // "Lucene-" + "BM25": a hyphen before a capital or digit is part of the word.
  if (/[\p{L}\p{N}][-\u2010]$/u.test(text)) return text + next;
  return `${text.replace(/\u00ad$/, '')} ${next}`;
}

/**
 * A hyphen at a line end is usually a syllable break ("ef-ficient"), but sometimes part of a compound
 * ("dual-encoder"). Keeps it when the document writes the same pair with a hyphen elsewhere.
 */
function resolveHyphenBreaks(blocks: Block[]): Block[] {
  if (!blocks.some((b) => b.text.includes(HYPHEN_BREAK))) return blocks;
  const pairs = new Set<string>();
  for (const b of blocks) {
    for (const compound of b.text.toLowerCase().match(/[\p{L}\p{N}]+(?:-[\p{L}\p{N}]+)+/gu) ?? []) {
      const parts = compound.split('-');
      for (let i = 1; i < parts.length; i++) pairs.add(`${parts[i - 1]}-${parts[i]}`);
    }
  }
  const marker = new RegExp(`([\\p{L}\\p{N}]*)${HYPHEN_BREAK}([\\p{L}\\p{N}]*)`, 'gu');
  return blocks.map((b) =>
    b.text.includes(HYPHEN_BREAK)
      ? {
          ...b,
          text: b.text.replace(marker, (_, a: string, c: string) => (pairs.has(`${a}-${c}`.toLowerCase()) ? `${a}-${c}` : a + c)),
        }
      : b,
  );
}

function isHeading(text: string, lines: Line[], size: number, body: BodyStyle): boolean {
  const visible = text.replace(/\s/g, '');
  const letters = (visible.match(/\p{L}/gu) ?? []).length;
  if (letters < 2 || letters < 0.5 * visible.length) return false;
  if (size >= body.size * 1.2 && lines.length <= 3 && text.length <= 200) return true;
  // Same-size bold lines are headings in most typeset documents when the body is not bold.
  return (
    !body.bold &&
    size >= body.size * 0.95 &&
    lines.length === 1 &&
    text.length <= 100 &&
    lines.every(isAllBold) &&
    !/[.,;:]$/.test(text)
  );
}

/** Heading levels rank heading sizes across the whole document: the largest is level 1. */
function assignHeadingLevels(blocks: PendingBlock[]): Block[] {
  const sizes = [...new Set(blocks.filter((b) => b.kind === 'heading').map((b) => b.size))].sort((p, q) => q - p);
  const levelOf = new Map<number, number>();
  let level = 0;
  let levelSize = Number.POSITIVE_INFINITY;
  for (const size of sizes) {
    if (size < levelSize * 0.95) {
      level = Math.min(6, level + 1);
      levelSize = size;
    }
    levelOf.set(size, level);
  }
  return blocks.map(({ size, ...block }) => (block.kind === 'heading' ? { ...block, level: levelOf.get(size) ?? 1 } : block));
}

function lineText(line: Line): string {
  return line.cells
    .map((c) => c.text)
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();
}

function isAllBold(line: Line): boolean {
  return line.chars > 0 && line.boldChars >= 0.9 * line.chars;
}

function sameSize(a: number, b: number): boolean {
  return Math.max(a, b) <= 1.15 * Math.min(a, b);
}

function roundSize(size: number): number {
  return Math.round(size * 2) / 2;
}

function dominantSize(sizeChars: Map<number, number>): number {
  let best = 0;
  let bestChars = -1;
  for (const [size, chars] of sizeChars) {
    if (chars > bestChars || (chars === bestChars && size > best)) {
      best = size;
      bestChars = chars;
    }
  }
  return best;
}

function verticalOverlap(top1: number, bottom1: number, top2: number, bottom2: number): number {
  return Math.min(bottom1, bottom2) - Math.max(top1, top2);
}

function medianOf(values: number[]): number {
  const sorted = [...values].sort((p, q) => p - q);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function modeOf(values: number[]): number | undefined {
  const counts = new Map<number, number>();
  let best: number | undefined;
  let bestCount = 0;
  for (const v of values) {
    const n = (counts.get(v) ?? 0) + 1;
    counts.set(v, n);
    if (n > bestCount || (n === bestCount && best !== undefined && v < best)) {
      best = v;
      bestCount = n;
    }
  }
  return best;
}

function multiply(m: Matrix, n: Matrix): Matrix {
  return [
    m[0] * n[0] + m[2] * n[1],
    m[1] * n[0] + m[3] * n[1],
    m[0] * n[2] + m[2] * n[3],
    m[1] * n[2] + m[3] * n[3],
    m[0] * n[4] + m[2] * n[5] + m[4],
    m[1] * n[4] + m[3] * n[5] + m[5],
  ];
}

// ---------------------------------------------------------------------------------------------------------
// Images

interface OperatorList {
  fnArray: number[];
  argsArray: unknown[];
}

interface ImageBudget {
  limits: ParseLimits;
  kept: number;
  skippedFigures: number;
  skippedScans: number;
  /** Image ids and pixel hashes already taken, so a logo on every page is kept once. */
  seen: Set<string>;
}

interface ImageUse {
  /** pdf.js object id, or undefined for an inline image whose data rides in the operator list. */
  id: string | undefined;
  inline: unknown;
  width: number;
  height: number;
  /** Share of the page area the image is drawn over. */
  coverage: number;
  bilevel: boolean;
}

interface RawImage {
  pixels: Uint8Array | Uint8ClampedArray;
  width: number;
  height: number;
  channels: PngChannels;
}

async function pageImages(
  pdfjs: Pdfjs,
  page: PDFPageProxy,
  operators: OperatorList,
  pageNumber: number,
  visibleChars: number,
  budget: ImageBudget,
  warnings: string[],
): Promise<ExtractedImage[]> {
  const uses = imageUses(pdfjs, page, operators);
  if (uses.length === 0) return [];
  const { minImageSide, maxImages } = budget.limits;

  if (visibleChars < SCANNED_MAX_TEXT_CHARS) {
    const scan = scannedPageImage(uses);
    if (scan) {
      if (budget.kept >= maxImages) {
        budget.skippedScans++;
        return [];
      }
      const image = await loadImage(page, scan, pdfjs, warnings, pageNumber);
      if (image) {
        budget.kept++;
        return [{ ...toPng(image), page: pageNumber, origin: 'scanned_page' }];
      }
    }
  }

  const out: ExtractedImage[] = [];
  const onPage = new Set<string>();
  for (const use of uses) {
    if (use.width < minImageSide || use.height < minImageSide) continue;
    if (use.id !== undefined) {
      if (onPage.has(use.id) || budget.seen.has(use.id)) continue;
      onPage.add(use.id);
      if (use.id.startsWith('g_')) budget.seen.add(use.id);
    }
    if (budget.kept >= maxImages) {
      budget.skippedFigures++;
      continue;
    }
    const image = await loadImage(page, use, pdfjs, warnings, pageNumber);
    if (!image || image.width < minImageSide || image.height < minImageSide) continue;
    // Pages that draw the same picture each carry their own copy with a page-local id.
    const fingerprint = `${image.width}x${image.height}x${image.channels}:${crc32(image.pixels)}`;
    if (budget.seen.has(fingerprint)) continue;
    budget.seen.add(fingerprint);
    budget.kept++;
    out.push({ ...toPng(image), page: pageNumber, origin: 'figure' });
  }
  return out;
}

/** The image that stands for a page without a text layer: a bilevel scan layer if there is one, else the largest. */
function scannedPageImage(uses: ImageUse[]): ImageUse | undefined {
  const covering = uses.filter((u) => u.coverage >= SCANNED_MIN_COVERAGE && Math.min(u.width, u.height) >= 100);
  if (covering.length === 0) return undefined;
  const most = Math.max(...covering.map((u) => u.coverage));
  const candidates = covering.filter((u) => u.coverage >= 0.5 * most);
  candidates.sort(
    (p, q) => Number(q.bilevel) - Number(p.bilevel) || q.coverage - p.coverage || q.width * q.height - p.width * p.height,
  );
  return candidates[0];
}

/** Walks the operator list, tracking the transformation matrix so each image's drawn area is known. */
function imageUses(pdfjs: Pdfjs, page: PDFPageProxy, operators: OperatorList): ImageUse[] {
  const { OPS } = pdfjs;
  const [vx0 = 0, vy0 = 0, vx1 = 0, vy1 = 0] = page.view;
  const pageArea = Math.abs((vx1 - vx0) * (vy1 - vy0)) || 1;
  const stack: Matrix[] = [];
  let ctm: Matrix = [1, 0, 0, 1, 0, 0];
  const uses: ImageUse[] = [];
  const coverage = () => Math.min(1, Math.abs(ctm[0] * ctm[3] - ctm[1] * ctm[2]) / pageArea);

  for (let i = 0; i < operators.fnArray.length; i++) {
    const fn = operators.fnArray[i];
    const args = operators.argsArray[i] as unknown[] | null | undefined;
    switch (fn) {
      case OPS.save:
        stack.push(ctm);
        break;
      case OPS.restore:
        ctm = stack.pop() ?? ctm;
        break;
      case OPS.transform:
        if (args && isMatrix(args)) ctm = multiply(ctm, args);
        break;
      case OPS.paintFormXObjectBegin: {
        stack.push(ctm);
        const matrix = args?.[0];
        if (isMatrix(matrix)) ctm = multiply(ctm, matrix);
        break;
      }
      case OPS.paintFormXObjectEnd:
        ctm = stack.pop() ?? ctm;
        break;
      case OPS.paintImageXObject:
      case OPS.paintImageXObjectRepeat: {
        const id = args?.[0];
        if (typeof id !== 'string') break;
        const width = fn === OPS.paintImageXObject ? Number(args?.[1]) : Number.NaN;
        const height = fn === OPS.paintImageXObject ? Number(args?.[2]) : Number.NaN;
        uses.push({ id, inline: undefined, width, height, coverage: coverage(), bilevel: false });
        break;
      }
      case OPS.paintImageMaskXObject: {
        const mask = args?.[0] as { data?: unknown; width?: unknown; height?: unknown } | undefined;
        if (typeof mask?.data !== 'string') break;
        const use = { id: mask.data, inline: undefined, width: Number(mask.width), height: Number(mask.height) };
        uses.push({ ...use, coverage: coverage(), bilevel: true });
        break;
      }
      case OPS.paintInlineImageXObject: {
        const img = args?.[0] as { width?: unknown; height?: unknown } | undefined;
        if (!img) break;
        const use = { id: undefined, inline: img, width: Number(img.width), height: Number(img.height) };
        uses.push({ ...use, coverage: coverage(), bilevel: false });
        break;
      }
    }
  }
  // Sizes missing from the operator (repeats) are learned when the image loads.
  for (const use of uses) {
    if (!Number.isFinite(use.width)) use.width = Number.POSITIVE_INFINITY;
    if (!Number.isFinite(use.height)) use.height = Number.POSITIVE_INFINITY;
  }
  return uses;
}

function isMatrix(value: unknown): value is Matrix {
  return Array.isArray(value) && value.length === 6 && value.every((n) => typeof n === 'number' && Number.isFinite(n));
}

async function loadImage(
  page: PDFPageProxy,
  use: ImageUse,
  pdfjs: Pdfjs,
  warnings: string[],
  pageNumber: number,
): Promise<RawImage | undefined> {
  const data = use.id === undefined ? use.inline : await pdfObject(page, use.id);
  const image = rawImage(data, pdfjs, use.bilevel);
  if (!image && data !== undefined) warnings.push(`An image on page ${pageNumber} is in a format that could not be read`);
  return image;
}

function pdfObject(page: PDFPageProxy, id: string): Promise<unknown> {
  const objs = id.startsWith('g_') ? page.commonObjs : page.objs;
  return new Promise((resolve) => {
    // Objects used by a finished operator list are normally resolved already; never wait forever.
    const timer = setTimeout(() => resolve(undefined), 5_000);
    try {
      objs.get(id, (value: unknown) => {
        clearTimeout(timer);
        resolve(value);
      });
    } catch {
      clearTimeout(timer);
      resolve(undefined);
    }
  });
}

/** pdf.js image data → 8-bit pixels. 1-bit data (bilevel images and stencil masks) is packed, 1 = white. */
function rawImage(value: unknown, pdfjs: Pdfjs, bilevel: boolean): RawImage | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const { width, height, kind, data } = value as { width?: unknown; height?: unknown; kind?: unknown; data?: unknown };
  if (typeof width !== 'number' || typeof height !== 'number' || !(width >= 1) || !(height >= 1)) return undefined;
  if (!(data instanceof Uint8Array || data instanceof Uint8ClampedArray)) return undefined;
  const pixels = width * height;
  const rowBytes = Math.ceil(width / 8);
  const { ImageKind } = pdfjs;

  if (kind === ImageKind.GRAYSCALE_1BPP || (bilevel && data.length >= rowBytes * height && data.length < pixels)) {
    if (data.length < rowBytes * height) return undefined;
    return { pixels: unpackBits(data, width, height), width, height, channels: 1 };
  }
  if (kind === ImageKind.RGB_24BPP && data.length >= pixels * 3) {
    return { pixels: data.subarray(0, pixels * 3), width, height, channels: 3 };
  }
  if (kind === ImageKind.RGBA_32BPP && data.length >= pixels * 4) {
    return dropOpaqueAlpha({ pixels: data.subarray(0, pixels * 4), width, height, channels: 4 });
  }
  const channels = data.length / pixels;
  if (channels === 1 || channels === 3) return { pixels: data, width, height, channels };
  if (channels === 4) return dropOpaqueAlpha({ pixels: data, width, height, channels: 4 });
  return undefined;
}

function unpackBits(data: Uint8Array | Uint8ClampedArray, width: number, height: number): Uint8Array {
  const out = new Uint8Array(width * height);
  const rowBytes = Math.ceil(width / 8);
  for (let y = 0; y < height; y++) {
    const row = y * rowBytes;
    const base = y * width;
    for (let x = 0; x < width; x++) {
      const byte = data[row + (x >> 3)] as number;
      out[base + x] = (byte >> (7 - (x & 7))) & 1 ? 255 : 0;
    }
  }
  return out;
}

function dropOpaqueAlpha(image: RawImage): RawImage {
  const { pixels, width, height } = image;
  for (let i = 3; i < pixels.length; i += 4) if (pixels[i] !== 255) return image;
  const rgb = new Uint8Array(width * height * 3);
  for (let p = 0, q = 0; p < pixels.length; p += 4, q += 3) {
    rgb[q] = pixels[p] as number;
    rgb[q + 1] = pixels[p + 1] as number;
    rgb[q + 2] = pixels[p + 2] as number;
  }
  return { pixels: rgb, width, height, channels: 3 };
}

/** Averages k×k blocks; an integer factor keeps it cheap and never blurs text across more than k pixels. */
function downscale(image: RawImage): RawImage {
  const { pixels, width, height, channels } = image;
  const factor = Math.ceil(Math.sqrt((width * height) / MAX_OUTPUT_PIXELS));
  if (factor <= 1) return image;
  const w = Math.max(1, Math.floor(width / factor));
  const h = Math.max(1, Math.floor(height / factor));
  const out = new Uint8Array(w * h * channels);
  const area = factor * factor;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      for (let c = 0; c < channels; c++) {
        let sum = 0;
        for (let dy = 0; dy < factor; dy++) {
          const row = ((y * factor + dy) * width + x * factor) * channels + c;
          for (let dx = 0; dx < factor; dx++) sum += pixels[row + dx * channels] as number;
        }
        out[(y * w + x) * channels + c] = Math.round(sum / area);
      }
    }
  }
  return { pixels: out, width: w, height: h, channels };
}

function toPng(image: RawImage): { png: Uint8Array; width: number; height: number } {
  const small = downscale(image);
  return { png: encodePng(small.pixels, small.width, small.height, small.channels), width: small.width, height: small.height };
}

// ---------------------------------------------------------------------------------------------------------
// Helpers

class TimeoutError extends Error {
  override name = 'TimeoutError';
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`${what} took longer than ${Math.round(ms / 1000)} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => {
    if (timer !== undefined) clearTimeout(timer);
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function plural(n: number): string {
  return n === 1 ? '' : 's';
}
