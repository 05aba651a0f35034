import type { ParseBudget } from './budget.ts';
import { ooxmlProperties } from './document-properties.ts';
import { type GraphicRef, graphicBlocks, graphicRefs } from './graphics.ts';
import { formatKind, formatNumber, type NumberKind } from './number-format.ts';
import {
  type ImageCollector,
  isRelType,
  type OoxmlPackage,
  type OoxmlText,
  openOfficeDocument,
  type Relationship,
  withImages,
} from './ooxml.ts';
import { SheetRows } from './table-rows.ts';
import { type Block, DEFAULT_PARSE_LIMITS, type ParsedDocument, type ParseLimits } from './types.ts';
import { child, children, descendants, forEachElement, path, textContent, type XmlElement } from './xml.ts';

/**
 * XLSX: sheets in workbook order, each a heading (its name) followed by one block per
 * non-empty row keyed by the sheet's header row, then the charts drawn on it (chart sheets too). Values are shown as a reader sees them:
 * shared and inline strings, numbers, booleans, and dates as ISO 8601. Rows are kept sparse,
 * and every cell's text counts against the document's budget, each time a shared string is used.
 */

export { formatKind, formatNumber } from './number-format.ts';

/** Cells read across the whole workbook before the rest is dropped with a warning. */
export const MAX_CELLS = 200_000;
// Merged ranges larger than this are not spread into every covered cell.
const MAX_MERGE_AREA = 1_000;
const MAX_MERGES = 10_000;
const MAX_COLUMN = 16_383;

interface Workbook {
  sharedStrings: string[];
  /** Per cell-format index: how a number in that format reads. */
  formats: NumberKind[];
  date1904: boolean;
}

export function parseXlsx(bytes: Uint8Array, limits: ParseLimits = DEFAULT_PARSE_LIMITS): ParsedDocument {
  return withImages(readXlsx(bytes, limits));
}

/** The workbook's text, and its images still to be read (see ooxml.ts). */
export function readXlsx(bytes: Uint8Array, limits: ParseLimits = DEFAULT_PARSE_LIMITS): OoxmlText {
  const { pkg, main: workbookXml, rels, budget, images } = openOfficeDocument(bytes, 'xlsx', limits, 'tree');
  const relOf = (type: string) => [...rels.values()].find((r) => isRelType(r, type) && !r.external);
  const pr = child(workbookXml, 'x:workbookPr');
  const workbook: Workbook = {
    sharedStrings: readSharedStrings(pkg, relOf('sharedStrings'), budget),
    formats: readFormats(pkg, relOf('styles')),
    date1904: pr?.attrs.date1904 === '1' || pr?.attrs.date1904 === 'true',
  };

  const blocks: Block[] = [];
  const warnings: string[] = [];
  const cellCap = { cells: MAX_CELLS, exhausted: false };
  const sheets = children(child(workbookXml, 'x:sheets') ?? workbookXml, 'x:sheet');
  budget.until(() => {
    sheets.forEach((sheet, i) => {
      const name = sheet.attrs.name ?? `Sheet ${i + 1}`;
      const page = i + 1;
      const rel = rels.get(sheet.attrs['r:id'] ?? '');
      if (!rel || rel.external) return;
      // A chart sheet holds no cells, only the drawing of its chart.
      if (isRelType(rel, 'chartsheet')) {
        drawn(pkg, rel.target, images, { page, sheet: name }, budget, blocks, false);
        return;
      }
      // Dialog sheets and macro sheets say nothing.
      if (!isRelType(rel, 'worksheet')) return;
      if (cellCap.exhausted) return;
      const xml = pkg.xml(rel.target);
      if (xml === null) {
        warnings.push(`Sheet "${name}" is missing from the file`);
        return;
      }
      const rows = new SheetRows(budget, { page, sheet: name });
      let sheetBlocks: Block[] = [];
      try {
        readSheet(xml, workbook, rows, cellCap, budget);
      } finally {
        // What was read before a stop is kept: the rows, under their sheet's name.
        sheetBlocks = rows.finish();
        if (sheetBlocks.length > 0) blocks.push({ kind: 'heading', text: name, level: 1, page, sheet: name }, ...sheetBlocks);
      }
      // Charts follow the sheet's rows (they draw on them), under the same heading.
      drawn(pkg, rel.target, images, { page, sheet: name }, budget, blocks, sheetBlocks.length > 0);
    });
  });
  if (cellCap.exhausted) warnings.push(`The workbook has more than ${MAX_CELLS} cells; only the first ${MAX_CELLS} were read`);

  return { blocks, warnings, pageCount: sheets.length, images, budget, properties: ooxmlProperties(pkg) };
}

function readSheet(
  xml: string,
  workbook: Workbook,
  rows: SheetRows,
  cellCap: { cells: number; exhausted: boolean },
  budget: ParseBudget,
): void {
  const merges = readMerges(xml);
  let nextRow = 0;
  const stop = new Error('cell budget exhausted');
  try {
    scanRows();
  } catch (error) {
    if (error !== stop) throw error;
  }

  function scanRows() {
    forEachElement(
      xml,
      (name, p) => name === 'x:row' && p[p.length - 1] === 'x:sheetData',
      (row) => {
        const index = Number.parseInt(row.attrs.r ?? '', 10) - 1;
        const rowIndex = Number.isFinite(index) && index >= 0 ? index : nextRow;
        nextRow = rowIndex + 1;
        const cells = new Map<number, string>();
        let column = 0;
        let ordered = true;
        for (const c of children(row, 'x:c')) {
          const ref = c.attrs.r ? parseRef(c.attrs.r) : null;
          if (ref && ref.column < column) ordered = false;
          column = ref ? ref.column : column;
          if (column > MAX_COLUMN) break;
          const value = cellValue(c, workbook);
          if (value !== '') {
            if (--cellCap.cells < 0) {
              cellCap.exhausted = true;
              // Stop scanning: the rest of a huge sheet is not worth the CPU.
              throw stop;
            }
            cells.set(column, value);
          }
          column++;
        }
        if (merges.fill(rowIndex, cells, budget)) ordered = false;
        const entries = [...cells];
        if (!ordered) entries.sort((a, b) => a[0] - b[0]);
        rows.row(rowIndex, entries);
      },
      budget,
    );
  }
}

function cellValue(c: XmlElement, workbook: Workbook): string {
  const type = c.attrs.t ?? 'n';
  if (type === 'inlineStr') {
    const is = child(c, 'x:is');
    return is ? richText(is) : '';
  }
  const v = child(c, 'x:v');
  const raw = v ? textContent(v) : '';
  if (raw === '') return '';
  switch (type) {
    case 's':
      return workbook.sharedStrings[Number.parseInt(raw, 10)] ?? '';
    case 'str':
      return raw;
    case 'b':
      return raw === '1' || raw === 'true' ? 'TRUE' : 'FALSE';
    case 'e':
      // #N/A, #DIV/0! and friends carry no information.
      return '';
    case 'd':
      return raw.replace(/T00:00:00(\.0+)?Z?$/, '');
    default: {
      const n = Number(raw);
      if (!Number.isFinite(n)) return raw;
      const kind = workbook.formats[Number.parseInt(c.attrs.s ?? '0', 10)] ?? 'number';
      return formatNumber(n, kind, workbook.date1904);
    }
  }
}

/** A string item's text: its runs, without phonetic guides (`x:rPh`). */
function richText(el: XmlElement): string {
  let text = '';
  for (const c of el.children) {
    if (typeof c === 'string') continue;
    if (c.name === 'x:t') text += textContent(c);
    else if (c.name === 'x:r') text += textContent(child(c, 'x:t') ?? { name: '', attrs: {}, children: [] });
  }
  return text;
}

// Built-in number formats that are dates or times (ECMA-376 18.8.30, plus the East Asian ones).
const BUILTIN_KINDS: Record<number, NumberKind> = {
  9: 'percent',
  10: 'percent',
  14: 'date',
  15: 'date',
  16: 'date',
  17: 'date',
  18: 'time',
  19: 'time',
  20: 'time',
  21: 'time',
  22: 'datetime',
  45: 'time',
  46: 'time',
  47: 'time',
};
for (const id of [27, 28, 29, 30, 31, 34, 35, 36, 50, 51, 52, 53, 54, 57, 58]) BUILTIN_KINDS[id] = 'date';
for (const id of [32, 33, 55, 56]) BUILTIN_KINDS[id] = 'time';

function readFormats(pkg: OoxmlPackage, rel: Relationship | undefined): NumberKind[] {
  const root = rel ? pkg.tree(rel.target) : null;
  if (!root) return [];
  const custom = new Map<number, NumberKind>();
  for (const fmt of children(child(root, 'x:numFmts') ?? root, 'x:numFmt')) {
    const id = Number.parseInt(fmt.attrs.numFmtId ?? '', 10);
    if (Number.isFinite(id)) custom.set(id, formatKind(fmt.attrs.formatCode ?? ''));
  }
  return children(child(root, 'x:cellXfs') ?? root, 'x:xf').map((xf) => {
    const id = Number.parseInt(xf.attrs.numFmtId ?? '0', 10);
    return custom.get(id) ?? BUILTIN_KINDS[id] ?? 'number';
  });
}

function readSharedStrings(pkg: OoxmlPackage, rel: Relationship | undefined, budget: ParseBudget): string[] {
  // Scanned in pieces as it inflates: the table's strings are kept, not the XML around them.
  const xml = rel ? pkg.text(rel.target) : null;
  if (xml === null) return [];
  const strings: string[] = [];
  forEachElement(
    xml,
    (name, p) => name === 'x:si' && p.length === 1,
    (si) => {
      strings.push(richText(si));
    },
    budget,
  );
  return strings;
}

function parseRef(ref: string): { column: number; row: number } | null {
  const m = /^\$?([A-Za-z]{1,3})\$?(\d+)$/.exec(ref);
  if (!m) return null;
  let column = 0;
  for (const ch of m[1]!.toUpperCase()) column = column * 26 + (ch.charCodeAt(0) - 64);
  return { column: column - 1, row: Number.parseInt(m[2]!, 10) - 1 };
}

interface Merge {
  top: number;
  left: number;
  bottom: number;
  right: number;
  value?: string;
}

/**
 * Merged ranges, which the sheet lists after its cells: found first, so that as rows stream
 * past, the value of a merged range's top-left cell fills the cells it covers. Rows come in
 * order, so only the ranges open at the current row are looked at.
 */
function readMerges(xml: string): MergeFill {
  const merges: Merge[] = [];
  const start = xml.search(/<(\w+:)?mergeCells[\s>]/);
  if (start !== -1) {
    for (const m of xml.slice(start).matchAll(/<(?:\w+:)?mergeCell\s[^<>]*ref="([^"<>]+)"/g)) {
      if (merges.length >= MAX_MERGES) break;
      const [a, b] = m[1]!.split(':');
      const from = a ? parseRef(a) : null;
      const to = b ? parseRef(b) : null;
      if (!from || !to) continue;
      const merge = { top: from.row, left: from.column, bottom: to.row, right: to.column };
      if ((merge.bottom - merge.top + 1) * (merge.right - merge.left + 1) <= MAX_MERGE_AREA) merges.push(merge);
    }
  }
  return new MergeFill(merges.sort((a, b) => a.top - b.top));
}

class MergeFill {
  private next = 0;
  private open: Merge[] = [];
  private lastRow = -1;

  constructor(private readonly byTop: readonly Merge[]) {}

  /** Fills row `row`'s cells from the ranges covering it; true when it added a cell. */
  fill(row: number, cells: Map<number, string>, budget: ParseBudget): boolean {
    if (this.byTop.length === 0) return false;
    if (row < this.lastRow) {
      // Rows out of order (a hand-made file): look again from the first range.
      budget.work(this.byTop.length);
      this.next = 0;
      this.open = [];
    }
    this.lastRow = row;
    while (this.next < this.byTop.length && this.byTop[this.next]!.top <= row) this.open.push(this.byTop[this.next++]!);
    budget.work(this.open.length);
    this.open = this.open.filter((merge) => merge.bottom >= row);
    let added = false;
    for (const merge of this.open) {
      if (row === merge.top) merge.value = cells.get(merge.left);
      if (!merge.value) continue;
      // Down a merged column the value repeats; across a merged row it is said once.
      if (row > merge.top && cells.get(merge.left) !== merge.value) {
        added ||= !cells.has(merge.left);
        cells.set(merge.left, merge.value);
      }
    }
    return added;
  }
}

/**
 * Appends the charts drawn on a sheet to `blocks`, under the sheet's heading unless its rows
 * already put it there; what was read before the budget ran out is kept.
 */
function drawn(
  pkg: OoxmlPackage,
  sheetPart: string,
  images: ImageCollector,
  place: { page: number; sheet: string },
  budget: ParseBudget,
  blocks: Block[],
  headed: boolean,
): void {
  const charts: Block[] = [];
  try {
    sheetDrawings(pkg, sheetPart, images, place, budget, charts);
  } finally {
    if (charts.length > 0 && !headed) blocks.push({ kind: 'heading', text: place.sheet, level: 1, ...place });
    blocks.push(...charts);
  }
}

/**
 * What a sheet's (or chart sheet's) drawing part places on it: pictures are noted for later,
 * charts and SmartArt become blocks at `place`, appended to `out`.
 */
function sheetDrawings(
  pkg: OoxmlPackage,
  sheetPart: string,
  images: ImageCollector,
  place: { page: number; sheet: string },
  budget: ParseBudget,
  out: Block[],
): void {
  for (const rel of pkg.rels(sheetPart).values()) {
    if (rel.external || !isRelType(rel, 'drawing')) continue;
    const drawing = pkg.tree(rel.target);
    if (!drawing) continue;
    const drawingRels = pkg.rels(rel.target);
    for (const pic of descendants(drawing, 'xdr:pic')) {
      const id = path(pic, 'xdr:blipFill', 'a:blip')?.attrs['r:embed'];
      const target = id ? drawingRels.get(id) : undefined;
      if (target && !target.external) images.add(target.target, place.page);
    }
    const refs: GraphicRef[] = [];
    for (const frame of descendants(drawing, 'xdr:graphicFrame')) graphicRefs(frame, refs);
    graphicBlocks(pkg, refs, drawingRels, place, budget, out);
  }
}
