import {
  dominantSize,
  type Fragment,
  isAllBold,
  type Line,
  lineText,
  medianOf,
  modeOf,
  regionLines,
  sameSize,
} from './pdf-lines.ts';
import type { Block } from './types.ts';

/** A block whose heading level is settled once every page's heading sizes are known. */
export interface PendingBlock extends Block {
  size: number;
}

export interface BodyStyle {
  size: number;
  bold: boolean;
}

// Bullets, and numbers or lowercase letters or roman numerals closed by '.' or ')'; not capital initials ("A. Smith").
const LIST_MARKER = /^(?:[•◦▪▫‣⁃●○■□➢►✓✔∙·–—*-]\s|\(?(?:\d{1,3}|[a-z]|[ivx]{1,5}|[IVX]{1,5})[.)]\s)/u;

export function regionBlocks(fragments: Fragment[], body: BodyStyle, pageNumber: number): PendingBlock[] {
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

export function joinLine(text: string, next: string): string {
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
export function resolveHyphenBreaks(blocks: Block[]): Block[] {
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
export function assignHeadingLevels(blocks: PendingBlock[]): Block[] {
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
