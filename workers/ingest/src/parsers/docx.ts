import { ImageCollector, isRelType, type OoxmlPackage, openPackage, type Relationship } from './ooxml.ts';
import { cleanCell, gridBlocks } from './table-rows.ts';
import { type Block, DEFAULT_PARSE_LIMITS, type ParsedDocument, ParseError, type ParseLimits } from './types.ts';
import { child, children, descendants, forEachElement, textContent, type XmlElement } from './xml.ts';

/**
 * DOCX: body paragraphs in order, headings from paragraph styles (or, in documents that
 * style headings by hand, from short bold runs set well above body size), list items,
 * tables as header-keyed rows, footnotes and endnotes, and embedded PNG figures. Pages are
 * known only from the page breaks Word recorded when it last laid the document out.
 */

interface Style {
  name: string;
  basedOn?: string;
  outline?: number;
  numbered: boolean;
  bold?: boolean;
  size?: number;
}

interface Styles {
  byId: Map<string, Style>;
  defaultParagraph?: string;
  /** Body text size in half-points. */
  bodySize: number;
}

interface Context {
  pkg: OoxmlPackage;
  rels: Map<string, Relationship>;
  styles: Styles;
  images: ImageCollector;
  blocks: Block[];
  /** Current 1-based page, or null when the document has no page-break information. */
  page: number | null;
  /** Which breaks count: Word's rendered ones when present, else the explicit ones. */
  rendered: boolean;
}

export function parseDocx(bytes: Uint8Array, limits: ParseLimits = DEFAULT_PARSE_LIMITS): ParsedDocument {
  const pkg = openPackage(bytes, 'docx');
  const xml = pkg.xml(pkg.main);
  if (xml === null) throw new ParseError('corrupt', 'The file is not a valid Word document');
  const rels = pkg.rels(pkg.main);
  const rendered = xml.includes('lastRenderedPageBreak');
  const paged = rendered || /<w:br [^>]*w:type="page"|<w:pageBreakBefore/.test(xml);
  const ctx: Context = {
    pkg,
    rels,
    styles: readStyles(pkg, rels),
    images: new ImageCollector(pkg, limits),
    blocks: [],
    page: paged ? 1 : null,
    rendered,
  };

  forEachElement(
    xml,
    (_name, path) => path[path.length - 1] === 'w:body',
    (el) => bodyElement(el, ctx),
  );
  const pageCount = ctx.page ?? undefined;
  for (const type of ['footnotes', 'endnotes']) {
    const rel = [...rels.values()].find((r) => isRelType(r, type) && !r.external);
    const notes = rel ? pkg.tree(rel.target) : null;
    if (!notes) continue;
    ctx.page = null;
    for (const note of [...children(notes, 'w:footnote'), ...children(notes, 'w:endnote')]) {
      // Separators and continuation notices are layout, not content.
      if (note.attrs['w:type'] && note.attrs['w:type'] !== 'normal') continue;
      for (const el of note.children) if (typeof el !== 'string') bodyElement(el, ctx);
    }
  }

  return {
    blocks: ctx.blocks,
    images: ctx.images.images,
    warnings: ctx.images.warnings(),
    ...(pageCount ? { pageCount } : {}),
  };
}

function bodyElement(el: XmlElement, ctx: Context): void {
  switch (el.name) {
    case 'w:p':
      paragraph(el, ctx);
      return;
    case 'w:tbl':
      table(el, ctx);
      return;
    case 'w:sdt':
    case 'w:sdtContent':
    case 'w:customXml':
    case 'w:txbxContent':
      for (const c of el.children) if (typeof c !== 'string') bodyElement(c, ctx);
      return;
  }
}

// ---------------------------------------------------------------------------------------------
// Paragraphs

interface Inline {
  text: string;
  /** Page breaks seen before the first visible character, and after it. */
  breaksBefore: number;
  breaksAfter: number;
  imageIds: string[];
  textboxes: XmlElement[];
  /** Every run carrying visible text is bold. */
  allBold: boolean;
  /** Smallest explicit size among runs with visible text, in half-points. */
  minSize: number | null;
  sawText: boolean;
}

const SKIPPED = new Set([
  'w:pPr',
  'w:rPr',
  'w:del',
  'w:moveFrom',
  'w:instrText',
  'w:delText',
  'w:sdtPr',
  'w:sdtEndPr',
  'w:fldChar',
]);

function collectInline(el: XmlElement, acc: Inline, ctx: Context, run: { bold: boolean; size: number | null } | null): void {
  for (const node of el.children) {
    if (typeof node === 'string') continue;
    switch (node.name) {
      case 'w:t':
      case 'm:t': {
        const text = textContent(node);
        if (text.trim() !== '') {
          acc.sawText = true;
          if (!run?.bold) acc.allBold = false;
          const size = run?.size ?? null;
          if (size !== null) acc.minSize = acc.minSize === null ? size : Math.min(acc.minSize, size);
          else acc.minSize = 0;
        }
        acc.text += text;
        break;
      }
      case 'w:tab':
      case 'w:ptab':
        acc.text += '\t';
        break;
      case 'w:cr':
        acc.text += '\n';
        break;
      case 'w:noBreakHyphen':
        acc.text += '-';
        break;
      case 'w:br': {
        const type = node.attrs['w:type'];
        if (type === 'page') {
          if (!ctx.rendered) pageBreak(acc);
        } else {
          acc.text += type === 'column' ? ' ' : '\n';
        }
        break;
      }
      case 'w:lastRenderedPageBreak':
        if (ctx.rendered) pageBreak(acc);
        break;
      case 'w:r': {
        const props = child(node, 'w:rPr');
        collectInline(node, acc, ctx, { bold: isBold(props), size: sizeOf(props) });
        break;
      }
      case 'w:drawing':
      case 'w:pict':
      case 'w:object':
        for (const blip of descendants(node, 'a:blip')) if (blip.attrs['r:embed']) acc.imageIds.push(blip.attrs['r:embed']);
        for (const data of descendants(node, 'v:imagedata')) if (data.attrs['r:id']) acc.imageIds.push(data.attrs['r:id']);
        acc.textboxes.push(...descendants(node, 'w:txbxContent'));
        break;
      default:
        if (!SKIPPED.has(node.name)) collectInline(node, acc, ctx, run);
    }
  }
}

function emptyInline(): Inline {
  return { text: '', breaksBefore: 0, breaksAfter: 0, imageIds: [], textboxes: [], allBold: true, minSize: null, sawText: false };
}

function pageBreak(acc: Inline): void {
  if (acc.sawText) acc.breaksAfter++;
  else acc.breaksBefore++;
}

const isOn = (el: XmlElement | undefined) => el !== undefined && !['0', 'false', 'off'].includes(el.attrs['w:val'] ?? '');

function isBold(props: XmlElement | undefined): boolean {
  return props ? isOn(child(props, 'w:b')) : false;
}

function sizeOf(props: XmlElement | undefined): number | null {
  const value = props && child(props, 'w:sz')?.attrs['w:val'];
  const size = value ? Number.parseInt(value, 10) : Number.NaN;
  return Number.isFinite(size) ? size : null;
}

function paragraph(el: XmlElement, ctx: Context): void {
  const props = child(el, 'w:pPr');
  const acc = emptyInline();
  if (props && !ctx.rendered && isOn(child(props, 'w:pageBreakBefore'))) acc.breaksBefore++;
  collectInline(el, acc, ctx, null);

  if (ctx.page !== null) ctx.page += acc.breaksBefore;
  const page = ctx.page ?? undefined;
  const text = acc.text
    .replace(/[ \t\u00a0]+/g, ' ')
    .replace(/ *\n */g, '\n')
    .trim();
  if (text !== '') {
    const styleId = props && child(props, 'w:pStyle')?.attrs['w:val'];
    const level = headingLevel(styleId, props, ctx.styles) ?? lookedLikeHeading(text, acc, styleId, ctx.styles);
    const listed = level === undefined && isListItem(styleId, props, ctx.styles);
    const kind: Block['kind'] = level !== undefined ? 'heading' : listed ? 'list_item' : 'paragraph';
    ctx.blocks.push({
      kind,
      text: kind === 'heading' ? text.replace(/\s+/g, ' ') : text,
      ...(level !== undefined ? { level } : {}),
      ...(page !== undefined ? { page } : {}),
    });
  }
  for (const id of acc.imageIds) {
    const rel = ctx.rels.get(id);
    if (rel && !rel.external) ctx.images.add(rel.target, page);
  }
  for (const box of acc.textboxes) bodyElement(box, ctx);
  if (ctx.page !== null) ctx.page += acc.breaksAfter;
}

function styleChain(styleId: string | undefined, styles: Styles): Style[] {
  const chain: Style[] = [];
  let id = styleId ?? styles.defaultParagraph;
  while (id && chain.length < 10) {
    const style = styles.byId.get(id);
    if (!style) break;
    chain.push(style);
    id = style.basedOn;
  }
  return chain;
}

function headingLevel(styleId: string | undefined, props: XmlElement | undefined, styles: Styles): number | undefined {
  const direct = props && child(props, 'w:outlineLvl')?.attrs['w:val'];
  const outline = direct !== undefined ? Number.parseInt(direct, 10) : undefined;
  if (outline !== undefined && outline >= 0 && outline < 9) return Math.min(6, outline + 1);
  for (const style of styleChain(styleId, styles)) {
    const name = style.name.toLowerCase();
    const match = /^heading\s*(\d)$/.exec(name);
    if (match) return Math.min(6, Math.max(1, Number(match[1])));
    if (name === 'title') return 1;
    if (name === 'subtitle') return 2;
    if (style.outline !== undefined && style.outline < 9) return Math.min(6, style.outline + 1);
  }
  return undefined;
}

/** Documents that make headings by hand: a short all-bold line set well above body size. */
function lookedLikeHeading(text: string, acc: Inline, styleId: string | undefined, styles: Styles): number | undefined {
  if (text.length > 120 || text.includes('\n') || /[.:;,]$/.test(text) || !acc.sawText) return undefined;
  const chain = styleChain(styleId, styles);
  const styleBold = chain.find((s) => s.bold !== undefined)?.bold ?? false;
  const styleSize = chain.find((s) => s.size !== undefined)?.size ?? styles.bodySize;
  const bold = acc.allBold || styleBold;
  const size = acc.minSize === null || acc.minSize === 0 ? styleSize : acc.minSize;
  if (!bold) return undefined;
  if (size >= styles.bodySize * 1.6) return 1;
  if (size >= styles.bodySize * 1.25) return 2;
  return undefined;
}

function isListItem(styleId: string | undefined, props: XmlElement | undefined, styles: Styles): boolean {
  const numId = props && child(props, 'w:numPr') && child(child(props, 'w:numPr')!, 'w:numId')?.attrs['w:val'];
  if (numId !== undefined) return numId !== '0';
  return styleChain(styleId, styles).some((s) => s.numbered || /^list (bullet|number)/i.test(s.name));
}

function readStyles(pkg: OoxmlPackage, rels: Map<string, Relationship>): Styles {
  const styles: Styles = { byId: new Map(), bodySize: 22 };
  const rel = [...rels.values()].find((r) => isRelType(r, 'styles') && !r.external);
  const root = rel ? pkg.tree(rel.target) : null;
  if (!root) return styles;
  const defaultSize = sizeOf(child(child(child(root, 'w:docDefaults') ?? root, 'w:rPrDefault') ?? root, 'w:rPr'));
  for (const el of children(root, 'w:style')) {
    const id = el.attrs['w:styleId'];
    if (!id || (el.attrs['w:type'] && el.attrs['w:type'] !== 'paragraph')) continue;
    const pPr = child(el, 'w:pPr');
    const rPr = child(el, 'w:rPr');
    const outline = pPr && child(pPr, 'w:outlineLvl')?.attrs['w:val'];
    const style: Style = {
      name: child(el, 'w:name')?.attrs['w:val'] ?? id,
      numbered: pPr !== undefined && child(pPr, 'w:numPr') !== undefined,
      ...(child(el, 'w:basedOn')?.attrs['w:val'] ? { basedOn: child(el, 'w:basedOn')!.attrs['w:val']! } : {}),
      ...(outline !== undefined ? { outline: Number.parseInt(outline, 10) } : {}),
      ...(rPr && child(rPr, 'w:b') ? { bold: isBold(rPr) } : {}),
      ...(sizeOf(rPr) !== null ? { size: sizeOf(rPr)! } : {}),
    };
    styles.byId.set(id, style);
    if (el.attrs['w:default'] === '1' || el.attrs['w:default'] === 'true') styles.defaultParagraph = id;
  }
  const normal = styles.defaultParagraph ? styles.byId.get(styles.defaultParagraph)?.size : undefined;
  styles.bodySize = normal ?? defaultSize ?? 22;
  return styles;
}

// ---------------------------------------------------------------------------------------------
// Tables

interface Cell {
  text: string;
  /** Continues the cell above (vertical merge). */
  continues: boolean;
  span: number;
}

function table(el: XmlElement, ctx: Context): void {
  const grid: string[][] = [];
  const pages: (number | undefined)[] = [];
  for (const row of tableRows(el)) {
    const cells: Cell[] = [];
    const trPr = child(row, 'w:trPr');
    const before = Number.parseInt((trPr && child(trPr, 'w:gridBefore')?.attrs['w:val']) ?? '0', 10) || 0;
    for (let i = 0; i < Math.min(before, 64); i++) cells.push({ text: '', continues: false, span: 1 });
    // A row that starts a page carries the break in its cells; count it once for the row.
    let rowBreaks = 0;
    const images: string[] = [];
    for (const tc of rowCells(row)) {
      const props = child(tc, 'w:tcPr');
      const span = Math.max(
        1,
        Math.min(64, Number.parseInt((props && child(props, 'w:gridSpan')?.attrs['w:val']) ?? '1', 10) || 1),
      );
      const vMerge = props && child(props, 'w:vMerge');
      const continues = vMerge !== undefined && vMerge.attrs['w:val'] !== 'restart';
      const content = cellContent(tc, ctx);
      rowBreaks = Math.max(rowBreaks, content.breaks);
      images.push(...content.imageIds);
      cells.push({ text: content.text, continues, span });
    }
    if (ctx.page !== null) ctx.page += rowBreaks;
    const page = ctx.page ?? undefined;
    for (const id of images) {
      const rel = ctx.rels.get(id);
      if (rel && !rel.external) ctx.images.add(rel.target, page);
    }
    const above = grid[grid.length - 1] ?? [];
    const values: string[] = [];
    for (const cell of cells) {
      for (let i = 0; i < cell.span; i++) {
        const column = values.length;
        // A merged-down cell repeats the value it continues, so each row stands alone. A header
        // spanning columns names each of them; a value spanning columns is said once.
        if (cell.continues) values.push(above[column] ?? '');
        else values.push(i === 0 || grid.length === 0 ? cell.text : '');
      }
    }
    grid.push(values);
    pages.push(page);
  }
  ctx.blocks.push(...gridBlocks(grid, (i) => (pages[i] !== undefined ? { page: pages[i] } : {})));
}

function tableRows(el: XmlElement): XmlElement[] {
  const rows: XmlElement[] = [];
  for (const c of el.children) {
    if (typeof c === 'string') continue;
    if (c.name === 'w:tr') rows.push(c);
    else if (c.name === 'w:sdt' || c.name === 'w:sdtContent' || c.name === 'w:customXml') rows.push(...tableRows(c));
  }
  return rows;
}

function rowCells(row: XmlElement): XmlElement[] {
  const cells: XmlElement[] = [];
  for (const c of row.children) {
    if (typeof c === 'string') continue;
    if (c.name === 'w:tc') cells.push(c);
    else if (c.name === 'w:sdt' || c.name === 'w:sdtContent' || c.name === 'w:customXml') cells.push(...rowCells(c));
  }
  return cells;
}

/** A cell's text (its paragraphs, and those of nested tables, on one line), images and page breaks. */
function cellContent(tc: XmlElement, ctx: Context): { text: string; imageIds: string[]; breaks: number } {
  const parts: string[] = [];
  const imageIds: string[] = [];
  let breaks = 0;
  for (const p of descendants(tc, 'w:p')) {
    const acc = emptyInline();
    collectInline(p, acc, ctx, null);
    const text = cleanCell(acc.text);
    if (text !== '') parts.push(text);
    imageIds.push(...acc.imageIds);
    breaks += acc.breaksBefore + acc.breaksAfter;
  }
  return { text: parts.join(' '), imageIds, breaks };
}
