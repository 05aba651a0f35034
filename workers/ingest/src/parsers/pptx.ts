import { MAX_BLOCK_CHARS } from '../chunking/placed-blocks.ts';
import type { ParseBudget } from './budget.ts';
import { ooxmlProperties } from './document-properties.ts';
import { RunText } from './docx-runs.ts';
import { graphicBlocks, graphicRefs } from './graphics.ts';
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
import { child, children, descendants, forEachElement, path, type TreeParts, type XmlElement } from './xml.ts';

/**
 * PPTX: one page per slide in presentation order. Title placeholders become headings,
 * text frames paragraphs or list items, tables header-keyed rows, charts a paragraph and
 * rows of their data (chart.ts), SmartArt list items (smartart.ts), pictures figures of
 * their slide, and speaker notes a paragraph of their own after the slide's content.
 */

// A presentation with more slides than this is not read further (each slide is parsed whole).
const MAX_SLIDES = 2_000;

interface SlideContext {
  pkg: OoxmlPackage;
  rels: Map<string, Relationship>;
  images: ImageCollector;
  blocks: Block[];
  page: number;
  budget: ParseBudget;
  /** The slide has a heading: its title, or failing one the title of its first titled chart. */
  headed: boolean;
  /** The slide's first shape goes on from the last one read: the rest of a shape handed over in parts. */
  goesOn: boolean;
  lastKind: Block['kind'];
}

/**
 * A slide whose text runs past this is read in parts as it streams past, so that a text frame of
 * megabytes is never held whole: only within a top-level text shape, whose paragraphs read on.
 */
const SLIDE_PARTS: TreeParts = {
  chars: 256 * 1024,
  allowed: (open) => open[2] === 'p:spTree' && open[3] === 'p:sp' && open[4] === 'p:txBody',
};

export function parsePptx(bytes: Uint8Array, limits: ParseLimits = DEFAULT_PARSE_LIMITS): ParsedDocument {
  return withImages(readPptx(bytes, limits));
}

/** The presentation's text, and its images still to be read (see ooxml.ts). */
export function readPptx(bytes: Uint8Array, limits: ParseLimits = DEFAULT_PARSE_LIMITS): OoxmlText {
  const { pkg, main: presentation, rels, budget, images } = openOfficeDocument(bytes, 'pptx', limits, 'tree');
  const slideParts: string[] = [];
  for (const id of children(child(presentation, 'p:sldIdLst') ?? presentation, 'p:sldId')) {
    const rel = rels.get(id.attrs['r:id'] ?? '');
    if (rel && !rel.external && isRelType(rel, 'slide')) slideParts.push(rel.target);
  }

  const warnings: string[] = [];
  if (slideParts.length > MAX_SLIDES) {
    warnings.push(`Only the first ${MAX_SLIDES} of ${slideParts.length} slides were read`);
    slideParts.length = MAX_SLIDES;
  }
  const blocks: Block[] = [];
  budget.until(() => {
    slideParts.forEach((part, i) => {
      const slide = pkg.text(part);
      if (!slide) {
        warnings.push(`Slide ${i + 1} is missing from the file`);
        return;
      }
      const ctx: SlideContext = {
        pkg,
        rels: pkg.rels(part),
        images,
        blocks,
        page: i + 1,
        budget,
        headed: false,
        goesOn: false,
        lastKind: 'paragraph',
      };
      forEachElement(
        slide,
        (_name, open) => open.length === 0,
        (root, _path, continued) => {
          ctx.goesOn = continued;
          const tree = path(root, 'p:cSld', 'p:spTree');
          if (tree) shapes(tree, ctx, true);
        },
        budget,
        SLIDE_PARTS,
      );
      notes(pkg, ctx);
    });
  });

  return { blocks, warnings, pageCount: slideParts.length, images, budget, properties: ooxmlProperties(pkg) };
}

/** Shapes in order, the slide's title first (it names the slide, wherever it sits in the tree). */
function shapes(tree: XmlElement, ctx: SlideContext, topLevel: boolean): void {
  const elements = tree.children.filter((c): c is XmlElement => typeof c !== 'string');
  // The rest of a shape handed over in parts comes first in its part, and reads on from the part before.
  const continued = topLevel && ctx.goesOn ? elements.splice(0, 1) : [];
  ctx.goesOn = continued.length > 0;
  const ordered = topLevel ? [...continued, ...elements.filter(isTitle), ...elements.filter((e) => !isTitle(e))] : elements;
  for (const el of ordered) {
    switch (el.name) {
      case 'p:sp':
        shape(el, ctx);
        break;
      case 'p:grpSp':
        shapes(el, ctx, false);
        break;
      case 'p:graphicFrame': {
        for (const tbl of descendants(el, 'a:tbl')) table(tbl, ctx);
        // A slide of charts alone is named by its chart, so that a deck of them has sections to chunk by.
        const refs = graphicRefs(el);
        if (graphicBlocks(ctx.pkg, refs, ctx.rels, { page: ctx.page }, ctx.budget, ctx.blocks, ctx.headed ? undefined : 1)) {
          ctx.headed = true;
        }
        break;
      }
      case 'p:pic': {
        const id = path(el, 'p:blipFill', 'a:blip')?.attrs['r:embed'];
        const rel = id ? ctx.rels.get(id) : undefined;
        if (rel && !rel.external) ctx.images.add(rel.target, ctx.page);
        break;
      }
    }
  }
}

function placeholderType(sp: XmlElement): string | undefined {
  const ph = path(sp, 'p:nvSpPr', 'p:nvPr', 'p:ph');
  return ph ? (ph.attrs.type ?? 'obj') : undefined;
}

function isTitle(el: XmlElement): boolean {
  if (el.name !== 'p:sp') return false;
  const type = placeholderType(el);
  return type === 'title' || type === 'ctrTitle';
}

function shape(sp: XmlElement, ctx: SlideContext): void {
  const goesOn = ctx.goesOn;
  ctx.goesOn = false;
  const body = child(sp, 'p:txBody');
  if (!body) return;
  const type = placeholderType(sp);
  // Footers, dates and slide numbers repeat on every slide and say nothing.
  if (type === 'dt' || type === 'ftr' || type === 'sldNum' || type === 'hdr') return;
  const read = paragraphs(body, ctx.budget);
  if (type === 'title' || type === 'ctrTitle') {
    const pieces = read.flatMap((p) => p.pieces);
    const chars = pieces.reduce((sum, piece) => sum + piece.length, 0);
    // A title of megabytes is not a heading but a wall of text, read as paragraphs below.
    if (pieces.length > 0 && chars <= MAX_BLOCK_CHARS && !goesOn) {
      ctx.blocks.push({ kind: 'heading', text: pieces.join(' ').replace(/\s+/g, ' '), level: 1, page: ctx.page });
      ctx.lastKind = 'heading';
      ctx.headed = true;
      return;
    }
    if (pieces.length === 0) return;
  }
  read.forEach((p, i) => {
    const readsOn = goesOn && i === 0;
    const kind: Block['kind'] = readsOn ? ctx.lastKind : p.bulleted ? 'list_item' : 'paragraph';
    if (p.pieces.length > 0) ctx.lastKind = kind;
    p.pieces.forEach((text, j) => {
      ctx.blocks.push({ kind, text, page: ctx.page, ...(j > 0 || readsOn ? { continues: true } : {}) });
    });
  });
}

const tidyRun = (text: string) => text.replace(/[ \t\u00a0]+/g, ' ').trim();

/**
 * A text frame's paragraphs: each one's text taken from the budget run by run as it is collected,
 * and cut and tidied piece by piece (see RunText), so that a run of megabytes is never joined and
 * copied whole; the pieces of an ordinary paragraph are one, or none when it is blank.
 */
function paragraphs(body: XmlElement, budget: ParseBudget): { pieces: string[]; bulleted: boolean }[] {
  return children(body, 'a:p').map((p) => {
    const text = new RunText(tidyRun);
    const add = (piece: string) => {
      if (piece !== '' && !budget.exhausted) text.add(budget.take(piece));
    };
    for (const run of p.children) {
      if (typeof run === 'string') continue;
      if (run.name === 'a:r' || run.name === 'a:fld') forEachText(child(run, 'a:t') ?? run, add);
      else if (run.name === 'a:br') add('\n');
    }
    const props = child(p, 'a:pPr');
    const bulleted =
      props !== undefined &&
      child(props, 'a:buNone') === undefined &&
      (child(props, 'a:buChar') !== undefined || child(props, 'a:buAutoNum') !== undefined || Number(props.attrs.lvl ?? 0) > 0);
    return { pieces: text.pieces(), bulleted };
  });
}

/** The text nodes under an element in order, a long one as the scanner's pieces. */
function forEachText(el: XmlElement, take: (text: string) => void): void {
  for (const c of el.children) {
    if (typeof c === 'string') take(c);
    else forEachText(c, take);
  }
}

function table(tbl: XmlElement, ctx: SlideContext): void {
  const grid: string[][] = [];
  for (const tr of children(tbl, 'a:tr')) {
    const above = grid[grid.length - 1] ?? [];
    const row: string[] = [];
    for (const tc of children(tr, 'a:tc')) {
      const column = row.length;
      const body = child(tc, 'a:txBody');
      // Taken from the budget as it is read; a repetition below counts again.
      const text = body
        ? cleanCell(
            paragraphs(body, ctx.budget)
              .flatMap((p) => p.pieces)
              .join(' '),
          )
        : '';
      // Merged-away cells: a vertical one repeats the value above; a horizontal one is said once.
      const isOn = (value: string | undefined) => value === '1' || value === 'true';
      const merged = isOn(tc.attrs.vMerge)
        ? (above[column] ?? '')
        : isOn(tc.attrs.hMerge)
          ? grid.length === 0
            ? (row[column - 1] ?? '')
            : ''
          : null;
      if (merged !== null) ctx.budget.count(merged.length);
      row.push(merged ?? text);
    }
    grid.push(row);
  }
  ctx.blocks.push(...gridBlocks(grid, ctx.budget, () => ({ page: ctx.page }), true));
}

function notes(pkg: OoxmlPackage, ctx: SlideContext): void {
  const rel = [...ctx.rels.values()].find((r) => isRelType(r, 'notesSlide') && !r.external);
  const tree = rel ? pkg.tree(rel.target) : null;
  const spTree = tree && path(tree, 'p:cSld', 'p:spTree');
  if (!spTree) return;
  const pieces = descendants(spTree, 'p:sp')
    .filter((sp) => placeholderType(sp) === 'body')
    .flatMap((sp) => {
      const body = child(sp, 'p:txBody');
      return body ? paragraphs(body, ctx.budget).flatMap((p) => p.pieces) : [];
    });
  // The notes in one paragraph, or in blocks of at most MAX_BLOCK_CHARS that read on when they are long.
  let text = '';
  let first = true;
  const push = () => {
    ctx.blocks.push({ kind: 'paragraph', text, page: ctx.page, ...(first ? {} : { continues: true }) });
    first = false;
  };
  for (const piece of pieces) {
    const next = text === '' ? `Speaker notes: ${piece}` : `${text}\n${piece}`;
    if (text !== '' && next.length > MAX_BLOCK_CHARS) {
      push();
      text = piece;
    } else {
      text = next;
    }
  }
  if (text !== '') push();
}
