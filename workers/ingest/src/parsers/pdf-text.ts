import type { PDFPageProxy } from 'unpdf/pdfjs';
import { type BodyStyle, joinLine, type PendingBlock, regionBlocks } from './pdf-blocks.ts';
import { readingOrder } from './pdf-columns.ts';
import { CELL_GAP_EM, dominantSize, type Fragment, roundSize, verticalOverlap } from './pdf-lines.ts';
import { type Matrix, multiply } from './pdf-support.ts';

// Text: items → fragments → columns → lines → blocks

type TextContent = Awaited<ReturnType<PDFPageProxy['getTextContent']>>;

export interface PageText {
  blocks: PendingBlock[];
  visibleChars: number;
}

export function pageText(
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
