import { MAX_BLOCK_CHARS } from '../chunking/placed-blocks.ts';
import type { ParseBudget } from './budget.ts';
import { ooxmlProperties } from './document-properties.ts';
import { type Breaks, collectInline, emptyInline, type Inline, isOn } from './docx-runs.ts';
import { headingLevel, isListItem, lookedLikeHeading, readStyles, type Styles } from './docx-styles.ts';
import { type GraphicRef, graphicBlocks } from './graphics.ts';
import {
  type ImageCollector,
  isRelType,
  type OoxmlPackage,
  type OoxmlText,
  openOfficeDocument,
  type Relationship,
  withImages,
} from './ooxml.ts';
import { cleanCell, gridBlocks } from './table-rows.ts';
import { type Block, DEFAULT_PARSE_LIMITS, type ParsedDocument, type ParseLimits } from './types.ts';
import { child, children, descendants, forEachElement, type TreeParts, type XmlElement } from './xml.ts';

/**
 * DOCX: body paragraphs in order, headings from paragraph styles (or, in documents that
 * style headings by hand, from short bold runs set well above body size), list items,
 * tables as header-keyed rows, text boxes, charts and SmartArt (after the paragraph holding
 * them), footnotes and endnotes, and embedded PNG figures. Pages are
 * known only from the page breaks Word recorded when it last laid the document out, or
 * failing those from the explicit ones. The body streams past as it inflates, one paragraph
 * or table at a time, so both kinds of break are counted and the choice is made at the end.
 */

/** Both page counts at a point of the body: by Word's rendered breaks, and by the explicit ones. */
interface Pages {
  rendered: number;
  explicit: number;
}

interface Context {
  pkg: OoxmlPackage;
  rels: Map<string, Relationship>;
  styles: Styles;
  images: ImageCollector;
  blocks: Block[];
  /** Breaks counted so far in the body; null in footnotes and endnotes, which have no page. */
  pages: Pages | null;
  /**
   * Where each block and image was placed: a block's `page` holds an index here until the end,
   * when it becomes the page number (or goes, in a document without page breaks).
   */
  marks: Pages[];
  sawRendered: boolean;
  sawExplicit: boolean;
  budget: ParseBudget;
  /** The next paragraph read goes on from the last one: the rest of a paragraph handed over in parts. */
  goesOn: boolean;
  lastKind: Block['kind'];
}

/**
 * A body paragraph whose text runs past this is read in parts as it streams past, so that it is
 * never held whole; not inside a table (a row must be read whole) or a text box.
 */
const BODY_PARTS: TreeParts = {
  chars: 4 * MAX_BLOCK_CHARS,
  allowed: (open) => !open.includes('w:tbl') && open.filter((name) => name === 'w:p').length === 1,
};

export function parseDocx(bytes: Uint8Array, limits: ParseLimits = DEFAULT_PARSE_LIMITS): ParsedDocument {
  return withImages(readDocx(bytes, limits));
}

/** The document's text, and its images still to be read (see ooxml.ts). */
export function readDocx(bytes: Uint8Array, limits: ParseLimits = DEFAULT_PARSE_LIMITS): OoxmlText {
  const { pkg, main: body, rels, budget, images } = openOfficeDocument(bytes, 'docx', limits, 'text');
  const ctx: Context = {
    pkg,
    rels,
    styles: readStyles(pkg, rels),
    images,
    blocks: [],
    pages: { rendered: 0, explicit: 0 },
    marks: [],
    sawRendered: false,
    sawExplicit: false,
    budget,
    goesOn: false,
    lastKind: 'paragraph',
  };

  let bodyPages: Pages | null = null;
  budget.until(() => {
    forEachElement(
      body,
      (_name, path) => path[path.length - 1] === 'w:body',
      (el, _path, continued) => {
        ctx.goesOn = continued;
        bodyElement(el, ctx);
      },
      budget,
      BODY_PARTS,
    );
    bodyPages = ctx.pages;
    for (const type of ['footnotes', 'endnotes']) {
      const rel = [...rels.values()].find((r) => isRelType(r, type) && !r.external);
      const notes = rel ? pkg.tree(rel.target) : null;
      if (!notes) continue;
      ctx.pages = null;
      for (const note of [...children(notes, 'w:footnote'), ...children(notes, 'w:endnote')]) {
        // Separators and continuation notices are layout, not content.
        if (note.attrs['w:type'] && note.attrs['w:type'] !== 'normal') continue;
        for (const el of note.children) if (typeof el !== 'string') bodyElement(el, ctx);
      }
    }
  });
  const pageCount = placePages(ctx, bodyPages ?? ctx.pages);
  return {
    blocks: ctx.blocks,
    warnings: [],
    ...(pageCount ? { pageCount } : {}),
    images: ctx.images,
    budget,
    properties: ooxmlProperties(pkg),
  };
}

/**
 * Numbers the pages now that the whole document was read: by Word's rendered breaks when it
 * recorded any, else by the explicit ones; a document with neither has no pages. Returns the count.
 */
function placePages(ctx: Context, end: Pages | null): number | undefined {
  const paged = ctx.sawRendered || ctx.sawExplicit;
  const pageOf = (mark: number): number | undefined => {
    const at = ctx.marks[mark];
    if (!paged || !at) return undefined;
    return (ctx.sawRendered ? at.rendered : at.explicit) + 1;
  };
  for (const block of ctx.blocks) {
    if (block.page === undefined) continue;
    const page = pageOf(block.page);
    if (page === undefined) delete block.page;
    else block.page = page;
  }
  ctx.images.placePages(pageOf);
  if (!paged || !end) return undefined;
  return (ctx.sawRendered ? end.rendered : end.explicit) + 1;
}

/** Where the body is now, as a mark for a block or image; undefined outside the body. */
function mark(ctx: Context): number | undefined {
  if (!ctx.pages) return undefined;
  ctx.marks.push({ ...ctx.pages });
  return ctx.marks.length - 1;
}

/** Moves the body on by the breaks of one side of a paragraph or row. */
function turnPages(ctx: Context, rendered: number, explicit: number): void {
  if (!ctx.pages) return;
  if (rendered > 0) ctx.sawRendered = true;
  if (explicit > 0) ctx.sawExplicit = true;
  ctx.pages.rendered += rendered;
  ctx.pages.explicit += explicit;
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

function paragraph(el: XmlElement, ctx: Context): void {
  const goesOn = ctx.goesOn;
  ctx.goesOn = false;
  const props = child(el, 'w:pPr');
  // The runs' text is taken from the budget as it is collected, so what is here is what is kept.
  const acc = emptyInline(ctx.budget, tidyParagraph);
  if (props && isOn(child(props, 'w:pageBreakBefore'))) acc.explicit.before++;
  collectInline(el, acc, null);

  turnPages(ctx, acc.rendered.before, acc.explicit.before);
  const page = mark(ctx);
  // A paragraph of megabytes was cut and tidied piece by piece as it was collected (RunText).
  const pieces = acc.text.pieces();
  const first = pieces[0];
  if (first !== undefined) {
    const styleId = props && child(props, 'w:pStyle')?.attrs['w:val'];
    // A heading is never a wall of text.
    const level =
      pieces.length === 1 && !goesOn
        ? (headingLevel(styleId, props, ctx.styles) ?? lookedLikeHeading(first, acc, styleId, ctx.styles))
        : undefined;
    const listed = level === undefined && isListItem(styleId, props, ctx.styles);
    const kind: Block['kind'] = goesOn ? ctx.lastKind : level !== undefined ? 'heading' : listed ? 'list_item' : 'paragraph';
    ctx.lastKind = kind;
    pieces.forEach((text, i) => {
      ctx.blocks.push({
        kind,
        text: kind === 'heading' ? text.replace(/\s+/g, ' ') : text,
        ...(level !== undefined ? { level } : {}),
        ...(page !== undefined ? { page } : {}),
        ...(i > 0 || goesOn ? { continues: true } : {}),
      });
    });
  }
  for (const id of acc.imageIds) {
    const rel = ctx.rels.get(id);
    if (rel && !rel.external) ctx.images.add(rel.target, page);
  }
  graphics(acc.graphics, page, ctx);
  for (const box of acc.textboxes) bodyElement(box, ctx);
  turnPages(ctx, acc.rendered.after, acc.explicit.after);
}

const tidyParagraph = (text: string) =>
  text
    .replace(/[ \t\u00a0]+/g, ' ')
    .replace(/ *\n */g, '\n')
    .trim();

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
  const placed: { refs: GraphicRef[]; page: number | undefined }[] = [];
  for (const row of wrappedChildren(el, 'w:tr')) {
    const cells: Cell[] = [];
    const trPr = child(row, 'w:trPr');
    const before = Number.parseInt((trPr && child(trPr, 'w:gridBefore')?.attrs['w:val']) ?? '0', 10) || 0;
    for (let i = 0; i < Math.min(before, 64); i++) cells.push({ text: '', continues: false, span: 1 });
    // A row that starts a page carries the break in its cells; count it once for the row.
    const rowBreaks = { rendered: 0, explicit: 0 };
    const images: string[] = [];
    const rowGraphics: GraphicRef[] = [];
    for (const tc of wrappedChildren(row, 'w:tc')) {
      const props = child(tc, 'w:tcPr');
      const span = Math.max(
        1,
        Math.min(64, Number.parseInt((props && child(props, 'w:gridSpan')?.attrs['w:val']) ?? '1', 10) || 1),
      );
      const vMerge = props && child(props, 'w:vMerge');
      const continues = vMerge !== undefined && vMerge.attrs['w:val'] !== 'restart';
      const content = cellContent(tc, ctx.budget);
      rowBreaks.rendered = Math.max(rowBreaks.rendered, content.breaks.rendered);
      rowBreaks.explicit = Math.max(rowBreaks.explicit, content.breaks.explicit);
      images.push(...content.imageIds);
      rowGraphics.push(...content.graphics);
      cells.push({ text: content.text, continues, span });
    }
    turnPages(ctx, rowBreaks.rendered, rowBreaks.explicit);
    const page = mark(ctx);
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
        if (cell.continues) {
          // Read once, said again: the repetition counts as its cell did.
          const repeated = above[column] ?? '';
          ctx.budget.count(repeated.length);
          values.push(repeated);
        } else {
          values.push(i === 0 || grid.length === 0 ? cell.text : '');
        }
      }
    }
    grid.push(values);
    pages.push(page);
    if (rowGraphics.length > 0) placed.push({ refs: rowGraphics, page });
  }
  const place = (i: number) => (pages[i] !== undefined ? { page: pages[i] } : {});
  ctx.blocks.push(...gridBlocks(grid, ctx.budget, place, true));
  // A chart in a cell is a table of its own: it follows the table rather than splitting it.
  for (const { refs, page } of placed) graphics(refs, page, ctx);
}

/** The blocks of the charts and SmartArt placed at `page` (a mark until the end, see placePages). */
function graphics(refs: GraphicRef[], page: number | undefined, ctx: Context): void {
  if (refs.length === 0) return;
  graphicBlocks(ctx.pkg, refs, ctx.rels, page !== undefined ? { page } : {}, ctx.budget, ctx.blocks);
}

// Content controls and custom XML may wrap a table's rows, or a row's cells.
const ROW_AND_CELL_WRAPPERS = new Set(['w:sdt', 'w:sdtContent', 'w:customXml']);

/** The `name` children of `el` (rows of a table, cells of a row), looking through the wrappers around them. */
function wrappedChildren(el: XmlElement, name: 'w:tr' | 'w:tc'): XmlElement[] {
  const found: XmlElement[] = [];
  for (const c of el.children) {
    if (typeof c === 'string') continue;
    if (c.name === name) found.push(c);
    else if (ROW_AND_CELL_WRAPPERS.has(c.name)) found.push(...wrappedChildren(c, name));
  }
  return found;
}

/**
 * A cell's text (its paragraphs, those of nested tables and of text boxes, on one line), taken
 * from the budget as it is collected, and its images, charts and page breaks.
 */
function cellContent(
  tc: XmlElement,
  budget: ParseBudget,
): { text: string; imageIds: string[]; graphics: GraphicRef[]; breaks: Pages } {
  const parts: string[] = [];
  const imageIds: string[] = [];
  const graphics: GraphicRef[] = [];
  const breaks = { rendered: 0, explicit: 0 };
  const read = (el: XmlElement) => {
    for (const p of descendants(el, 'w:p')) {
      const acc: Inline = emptyInline(budget, cleanCell);
      collectInline(p, acc, null);
      const text = acc.text.pieces().join(' ');
      if (text !== '') parts.push(text);
      imageIds.push(...acc.imageIds);
      graphics.push(...acc.graphics);
      breaks.rendered += count(acc.rendered);
      breaks.explicit += count(acc.explicit);
      for (const box of acc.textboxes) read(box);
    }
  };
  read(tc);
  return { text: parts.join(' '), imageIds, graphics, breaks };
}

const count = (breaks: Breaks) => breaks.before + breaks.after;
