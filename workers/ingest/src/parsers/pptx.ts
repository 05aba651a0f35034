import { ParseBudget } from './budget.ts';
import { graphicBlocks, graphicRefs } from './graphics.ts';
import {
  ImageCollector,
  isRelType,
  type OoxmlPackage,
  type OoxmlText,
  openPackage,
  type Relationship,
  withImages,
} from './ooxml.ts';
import { cleanCell, gridBlocks } from './table-rows.ts';
import { type Block, DEFAULT_PARSE_LIMITS, type ParsedDocument, ParseError, type ParseLimits } from './types.ts';
import { child, children, descendants, path, textContent, type XmlElement } from './xml.ts';

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
}

export function parsePptx(bytes: Uint8Array, limits: ParseLimits = DEFAULT_PARSE_LIMITS): ParsedDocument {
  return withImages(readPptx(bytes, limits));
}

/** The presentation's text, and its images still to be read (see ooxml.ts). */
export function readPptx(bytes: Uint8Array, limits: ParseLimits = DEFAULT_PARSE_LIMITS): OoxmlText {
  const budget = new ParseBudget(limits);
  const pkg = openPackage(bytes, 'pptx', budget);
  const presentation = pkg.tree(pkg.main);
  if (!presentation) throw new ParseError('corrupt', 'The file is not a valid PowerPoint presentation');
  const rels = pkg.rels(pkg.main);
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
  const images = new ImageCollector(pkg, limits);
  const blocks: Block[] = [];
  budget.until(() => {
    slideParts.forEach((part, i) => {
      const slide = pkg.tree(part);
      if (!slide) {
        warnings.push(`Slide ${i + 1} is missing from the file`);
        return;
      }
      const ctx: SlideContext = { pkg, rels: pkg.rels(part), images, blocks, page: i + 1, budget, headed: false };
      const tree = path(slide, 'p:cSld', 'p:spTree');
      if (tree) shapes(tree, ctx, true);
      notes(pkg, ctx);
    });
  });

  return { blocks, warnings, pageCount: slideParts.length, images, budget };
}

/** Shapes in order, the slide's title first (it names the slide, wherever it sits in the tree). */
function shapes(tree: XmlElement, ctx: SlideContext, topLevel: boolean): void {
  const elements = tree.children.filter((c): c is XmlElement => typeof c !== 'string');
  const ordered = topLevel ? [...elements.filter(isTitle), ...elements.filter((e) => !isTitle(e))] : elements;
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
  const body = child(sp, 'p:txBody');
  if (!body) return;
  const type = placeholderType(sp);
  // Footers, dates and slide numbers repeat on every slide and say nothing.
  if (type === 'dt' || type === 'ftr' || type === 'sldNum' || type === 'hdr') return;
  if (type === 'title' || type === 'ctrTitle') {
    const text = paragraphs(body)
      .map((p) => p.text)
      .join(' ')
      .replace(/\s+/g, ' ')
      .trim();
    if (text !== '') {
      ctx.blocks.push({ kind: 'heading', text: ctx.budget.take(text), level: 1, page: ctx.page });
      ctx.headed = true;
    }
    return;
  }
  for (const p of paragraphs(body)) {
    const text = p.text.trim();
    if (text === '') continue;
    ctx.blocks.push({ kind: p.bulleted ? 'list_item' : 'paragraph', text: ctx.budget.take(text), page: ctx.page });
  }
}

function paragraphs(body: XmlElement): { text: string; bulleted: boolean }[] {
  return children(body, 'a:p').map((p) => {
    let text = '';
    for (const run of p.children) {
      if (typeof run === 'string') continue;
      if (run.name === 'a:r' || run.name === 'a:fld') text += textContent(child(run, 'a:t') ?? run);
      else if (run.name === 'a:br') text += '\n';
    }
    const props = child(p, 'a:pPr');
    const bulleted =
      props !== undefined &&
      child(props, 'a:buNone') === undefined &&
      (child(props, 'a:buChar') !== undefined || child(props, 'a:buAutoNum') !== undefined || Number(props.attrs.lvl ?? 0) > 0);
    return { text: text.replace(/[ \t\u00a0]+/g, ' '), bulleted };
  });
}

function table(tbl: XmlElement, ctx: SlideContext): void {
  const grid: string[][] = [];
  for (const tr of children(tbl, 'a:tr')) {
    const above = grid[grid.length - 1] ?? [];
    const row: string[] = [];
    for (const tc of children(tr, 'a:tc')) {
      const column = row.length;
      const body = child(tc, 'a:txBody');
      const text = body
        ? cleanCell(
            paragraphs(body)
              .map((p) => p.text)
              .join(' '),
          )
        : '';
      // Merged-away cells: a vertical one repeats the value above; a horizontal one is said once.
      if (tc.attrs.vMerge === '1' || tc.attrs.vMerge === 'true') row.push(above[column] ?? '');
      else if (tc.attrs.hMerge === '1' || tc.attrs.hMerge === 'true') row.push(grid.length === 0 ? (row[column - 1] ?? '') : '');
      else row.push(text);
    }
    grid.push(row);
  }
  ctx.blocks.push(...gridBlocks(grid, ctx.budget, () => ({ page: ctx.page })));
}

function notes(pkg: OoxmlPackage, ctx: SlideContext): void {
  const rel = [...ctx.rels.values()].find((r) => isRelType(r, 'notesSlide') && !r.external);
  const tree = rel ? pkg.tree(rel.target) : null;
  const spTree = tree && path(tree, 'p:cSld', 'p:spTree');
  if (!spTree) return;
  const text = descendants(spTree, 'p:sp')
    .filter((sp) => placeholderType(sp) === 'body')
    .flatMap((sp) => {
      const body = child(sp, 'p:txBody');
      return body ? paragraphs(body).map((p) => p.text.trim()) : [];
    })
    .filter((t) => t !== '')
    .join('\n');
  if (text !== '') ctx.blocks.push({ kind: 'paragraph', text: ctx.budget.take(`Speaker notes: ${text}`), page: ctx.page });
}
