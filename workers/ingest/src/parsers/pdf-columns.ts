import { type Fragment, medianOf, regionLines, verticalOverlap } from './pdf-lines.ts';

/**
 * Splits the page into regions in reading order. A vertical gutter that almost no fragment crosses
 * divides columns; fragments that do cross it (titles, wide captions) cut the page into bands, so a
 * two-column body under a full-width title reads title, left column, right column. Tables are not
 * columns: their cells are short and their content stream alternates left and right row by row.
 */
export function readingOrder(fragments: Fragment[], depth: number): Fragment[][] {
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
