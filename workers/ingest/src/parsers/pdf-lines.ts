/** Text fragments grouped into lines, and the small measures the layout code shares. */

/** A run of text pieces that sit next to each other on one baseline, in content-stream order. */
export interface Fragment {
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

export interface Line {
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

// Word spacing in justified text stays under about an em; table cells and column gutters are wider.
export const CELL_GAP_EM = 1.2;

export function regionLines(fragments: Fragment[]): Line[] {
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

export function lineText(line: Line): string {
  return line.cells
    .map((c) => c.text)
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();
}

export function isAllBold(line: Line): boolean {
  return line.chars > 0 && line.boldChars >= 0.9 * line.chars;
}

export function sameSize(a: number, b: number): boolean {
  return Math.max(a, b) <= 1.15 * Math.min(a, b);
}

export function roundSize(size: number): number {
  return Math.round(size * 2) / 2;
}

export function dominantSize(sizeChars: Map<number, number>): number {
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

export function verticalOverlap(top1: number, bottom1: number, top2: number, bottom2: number): number {
  return Math.min(bottom1, bottom2) - Math.max(top1, top2);
}

export function medianOf(values: number[]): number {
  const sorted = [...values].sort((p, q) => p - q);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

export function modeOf(values: number[]): number | undefined {
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
