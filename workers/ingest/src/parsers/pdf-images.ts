import type { PDFPageProxy } from 'unpdf/pdfjs';
import { crc32 } from './crc32.ts';
import { type Matrix, multiply, type Pdfjs } from './pdf-support.ts';
import { encodePng, type PngChannels } from './png.ts';
import type { ExtractedImage, ParseLimits } from './types.ts';

// pdf.js decodes every image in full before we see it; above this it skips the image, which keeps a
// 128 MB worker alive (16 MP of RGBA is already 64 MB).
export const MAX_DECODED_IMAGE_PIXELS = 16_000_000;
// Larger images are box-downscaled before PNG encoding: enough for OCR of an A4 page at 300 dpi.
const MAX_OUTPUT_PIXELS = 9_000_000;
// A page with fewer visible characters than this has no real text layer (a stray page number at most).
const SCANNED_MAX_TEXT_CHARS = 30;
// The image must cover this share of the page to stand for the page.
const SCANNED_MIN_COVERAGE = 0.25;

export interface OperatorList {
  fnArray: number[];
  argsArray: unknown[];
}

export interface ImageBudget {
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

export async function pageImages(
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

function toPng(image: RawImage): { bytes: Uint8Array; mediaType: 'image/png'; width: number; height: number } {
  const small = downscale(image);
  return {
    bytes: encodePng(small.pixels, small.width, small.height, small.channels),
    mediaType: 'image/png',
    width: small.width,
    height: small.height,
  };
}
