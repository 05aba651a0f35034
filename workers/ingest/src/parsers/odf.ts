import { packageOfMimetype } from '#core/documents/detect-type.ts';
import { ParseBudget } from './budget.ts';
import { type DocumentProperties, properties } from './document-properties.ts';
import { ImageCollector, type OoxmlText } from './ooxml.ts';
import { gridBlocks, SheetRows } from './table-rows.ts';
import { type Block, DEFAULT_PARSE_LIMITS, ParseError, type ParseLimits } from './types.ts';
import { decodeXmlPieces, forEachElement, type XmlElement, type XmlText } from './xml.ts';
import { SKIP, scan } from './xml-scan.ts';
import { openZip, type ZipArchive } from './zip.ts';

/**
 * OpenDocument (ODT, ODS, ODP) → the blocks their Office counterparts give: a text's headings (by
 * outline level), paragraphs, lists and tables; a spreadsheet's sheets as headed rows (table-rows.ts);
 * a presentation's slides as pages, their titles as headings. content.xml is read as it inflates, the
 * package under the same ZIP limits as an Office file's, and its pictures are figures.
 */

export type OdfType = 'odt' | 'ods' | 'odp';

const LABEL: Record<OdfType, string> = {
  odt: 'OpenDocument text',
  ods: 'OpenDocument spreadsheet',
  odp: 'OpenDocument presentation',
};

/** What is not the document's own reading text: tracked deletions, comments, tables of contents, templates. */
const SKIPPED = new Set([
  'text:tracked-changes',
  'office:annotation',
  'text:note',
  'text:table-of-content',
  'text:illustration-index',
  'text:bibliography-source',
  'text:alphabetical-index-source',
  'office:forms',
  'text:sequence-decls',
  'text:variable-decls',
  'presentation:notes',
  'svg:title',
  'svg:desc',
]);
const TEXT_BLOCKS = new Set(['text:h', 'text:p', 'text:list', 'table:table', 'draw:image']);

/** Repeated cells and rows at most taken as values (a sheet's trailing blank rows repeat a million times). */
const MAX_REPEAT = 100;

export function readOdf(bytes: Uint8Array, type: OdfType, limits: ParseLimits = DEFAULT_PARSE_LIMITS): OoxmlText {
  const budget = new ParseBudget(limits);
  const zip = openOdf(bytes, type);
  const content = zip.chunks('content.xml');
  if (content === null) throw new ParseError('corrupt', `The file is not a valid ${LABEL[type]}`);
  const images = new ImageCollector({ zip }, limits);
  const blocks: Block[] = [];
  let pageCount: number | undefined;
  const xml = decodeXmlPieces(content);
  budget.until(() => {
    if (type === 'ods') pageCount = readSheets(xml, blocks, budget);
    else if (type === 'odp') pageCount = readSlides(xml, blocks, images, budget);
    else readText(xml, blocks, images, budget);
  });
  return {
    blocks,
    warnings: [],
    ...(pageCount !== undefined ? { pageCount } : {}),
    images,
    budget,
    properties: odfProperties(zip, budget),
  };
}

/** The package, once its `mimetype` says it is this kind and its manifest says it is not encrypted. */
function openOdf(bytes: Uint8Array, type: OdfType): ZipArchive {
  const zip = openZip(bytes);
  const declared = packageOfMimetype(zip.readText('mimetype') ?? '');
  if (declared !== type) {
    if (declared && declared !== 'epub')
      throw new ParseError('unsupported', `The file is an ${LABEL[declared]}, not an ${LABEL[type]}`);
    throw new ParseError('corrupt', `The file is not a valid ${LABEL[type]}`);
  }
  // An encrypted package keeps its structure but enciphers content.xml; the manifest says so.
  if ((zip.readText('META-INF/manifest.xml') ?? '').includes('encryption-data')) {
    throw new ParseError('encrypted', 'The document is password-protected');
  }
  return zip;
}

/** dc:title and meta:creation-date (else dc:date) of meta.xml. */
function odfProperties(zip: ZipArchive, budget: ParseBudget): DocumentProperties {
  const pieces = zip.chunks('meta.xml');
  if (pieces === null) return {};
  const found: Record<string, string> = {};
  budget.until(() =>
    forEachElement(
      decodeXmlPieces(pieces),
      (name) => name === 'dc:title' || name === 'meta:creation-date' || name === 'dc:date',
      (el) => {
        found[el.name] ??= textOf(el);
      },
      budget,
    ),
  );
  return properties(found['dc:title'], found['meta:creation-date'] ?? found['dc:date']);
}

const skipped = (path: readonly string[]) => path.some((name) => SKIPPED.has(name));

function readText(xml: XmlText, blocks: Block[], images: ImageCollector, budget: ParseBudget): void {
  forEachElement(
    xml,
    (name, path) => TEXT_BLOCKS.has(name) && path.includes('office:text') && !skipped(path),
    (el) => textBlock(el, {}, blocks, images, budget),
    budget,
  );
}

function readSlides(xml: XmlText, blocks: Block[], images: ImageCollector, budget: ParseBudget): number {
  let page = 0;
  forEachElement(
    xml,
    (name, path) => name === 'draw:page' && path.includes('office:presentation'),
    (el) => {
      page++;
      slideBlocks(el, page, blocks, images, budget);
    },
    budget,
  );
  return page;
}

/** A slide's frames in order: the title placeholder a heading, text boxes' paragraphs and lists, tables, pictures. */
function slideBlocks(node: XmlElement, page: number, blocks: Block[], images: ImageCollector, budget: ParseBudget): void {
  for (const child of node.children) {
    if (typeof child === 'string' || SKIPPED.has(child.name)) continue;
    budget.work();
    if (child.name === 'draw:frame' && child.attrs['presentation:class'] === 'title') {
      const text = collapse(textOf(child));
      if (text) blocks.push({ kind: 'heading', text: budget.take(text), level: 1, page });
    } else if (TEXT_BLOCKS.has(child.name)) {
      textBlock(child, { page }, blocks, images, budget);
    } else {
      slideBlocks(child, page, blocks, images, budget);
    }
  }
}

/** One of a text's blocks (a heading, paragraph, list, table or picture), at `place`. */
function textBlock(
  el: XmlElement,
  place: Pick<Block, 'page'>,
  blocks: Block[],
  images: ImageCollector,
  budget: ParseBudget,
): void {
  const push = (kind: Block['kind'], raw: string, level?: number) => {
    const text = collapse(raw);
    if (text) blocks.push({ kind, text: budget.take(text), ...(level ? { level } : {}), ...place });
  };
  switch (el.name) {
    case 'text:h': {
      const level = Number.parseInt(el.attrs['text:outline-level'] ?? '1', 10);
      push('heading', textOf(el), Number.isFinite(level) ? Math.min(Math.max(level, 1), 6) : 1);
      break;
    }
    case 'text:p':
      push('paragraph', textOf(el));
      break;
    case 'text:list':
      for (const item of el.children) {
        if (typeof item === 'string') continue;
        for (const part of item.children) {
          if (typeof part === 'string') continue;
          if (part.name === 'text:list') textBlock(part, place, blocks, images, budget);
          else if (part.name === 'text:p' || part.name === 'text:h') push('list_item', textOf(part));
        }
      }
      break;
    case 'table:table':
      blocks.push(...gridBlocks(tableGrid(el), budget, () => place));
      break;
    case 'draw:image': {
      const href = el.attrs['xlink:href'];
      if (href && !/^[a-z]+:/i.test(href)) images.add(href.replace(/^\.\//, ''), place.page);
      break;
    }
  }
  // Pictures anchored in a paragraph are figures of it.
  if (el.name === 'text:p' || el.name === 'text:h') {
    for (const image of descendantsNamed(el, 'draw:image')) textBlock(image, place, blocks, images, budget);
  }
}

/** A table's rows as text cells, a repeated cell or row repeated (up to MAX_REPEAT). */
function tableGrid(table: XmlElement): string[][] {
  const rows: string[][] = [];
  const walk = (node: XmlElement) => {
    for (const child of node.children) {
      if (typeof child === 'string') continue;
      if (child.name === 'table:table-row') {
        const cells: string[] = [];
        for (const cell of child.children) {
          if (typeof cell === 'string' || !cell.name.endsWith('table-cell')) continue;
          const text = collapse(textOf(cell));
          const times = text ? repeat(cell.attrs['table:number-columns-repeated']) : 1;
          for (let i = 0; i < times; i++) cells.push(text);
        }
        rows.push(cells);
      } else if (child.name.startsWith('table:table-')) {
        walk(child);
      }
    }
  };
  walk(table);
  return rows;
}

const repeat = (attr: string | undefined) => Math.min(MAX_REPEAT, Math.max(1, Number.parseInt(attr ?? '1', 10) || 1));

/**
 * A spreadsheet's sheets, scanned as they stream: each is a heading and its rows (the first the
 * header), as XLSX's are. Blank repeated rows and cells only move the position on.
 */
function readSheets(xml: XmlText, blocks: Block[], budget: ParseBudget): number {
  let sheet = 0;
  let rows: SheetRows | null = null;
  let name = '';
  let row = 0;
  let rowRepeat = 1;
  let cells: [number, string][] = [];
  let column = 0;
  let cell: { text: string; repeat: number; paragraphs: number } | null = null;
  const endSheet = () => {
    if (!rows) return;
    const sheetBlocks = rows.finish();
    if (sheetBlocks.length > 0) blocks.push({ kind: 'heading', text: name, level: 1, page: sheet, sheet: name }, ...sheetBlocks);
    rows = null;
  };
  scan(
    xml,
    {
      open(tag, attrs) {
        // A skipped element's content and close are not reported at all.
        if (SKIPPED.has(tag)) return SKIP;
        if (tag === 'table:table') {
          sheet++;
          name = attrs['table:name'] ?? `Sheet ${sheet}`;
          rows = new SheetRows(budget, { page: sheet, sheet: name });
          row = 0;
        } else if (tag === 'table:table-row') {
          cells = [];
          column = 0;
          rowRepeat = Math.max(1, Number.parseInt(attrs['table:number-rows-repeated'] ?? '1', 10) || 1);
        } else if (tag === 'table:table-cell' || tag === 'table:covered-table-cell') {
          cell = {
            text: '',
            repeat: Math.max(1, Number.parseInt(attrs['table:number-columns-repeated'] ?? '1', 10) || 1),
            paragraphs: 0,
          };
        } else if (cell && tag === 'text:p') {
          if (cell.paragraphs++ > 0) cell.text += ' ';
        } else if (cell && tag === 'text:s') {
          cell.text += ' ';
        }
        return undefined;
      },
      close(tag) {
        if ((tag === 'table:table-cell' || tag === 'table:covered-table-cell') && cell) {
          const text = cell.text.trim();
          if (text) for (let i = 0; i < Math.min(cell.repeat, MAX_REPEAT); i++) cells.push([column + i, text]);
          column += cell.repeat;
          cell = null;
        } else if (tag === 'table:table-row') {
          const times = cells.length > 0 ? Math.min(rowRepeat, MAX_REPEAT) : 0;
          for (let i = 0; i < times; i++) rows?.row(row + i, cells);
          row += rowRepeat;
        } else if (tag === 'table:table') {
          endSheet();
        }
      },
      text(text) {
        if (cell) cell.text += text;
      },
    },
    budget,
  );
  endSheet();
  return sheet;
}

/** An element's reading text: spaces, tabs and line breaks as ODF marks them, skipped parts left out. */
function textOf(el: XmlElement): string {
  let out = '';
  for (const child of el.children) {
    if (typeof child === 'string') out += child;
    else if (SKIPPED.has(child.name)) continue;
    else if (child.name === 'text:s') out += ' '.repeat(Math.min(repeat(child.attrs['text:c']), 8));
    else if (child.name === 'text:tab') out += '\t';
    else if (child.name === 'text:line-break') out += '\n';
    else if (child.name === 'text:p' || child.name === 'text:h') out += ` ${textOf(child)} `;
    else out += textOf(child);
  }
  return out;
}

function descendantsNamed(el: XmlElement, name: string, out: XmlElement[] = []): XmlElement[] {
  for (const child of el.children) {
    if (typeof child === 'string' || SKIPPED.has(child.name)) continue;
    if (child.name === name) out.push(child);
    else descendantsNamed(child, name, out);
  }
  return out;
}

const collapse = (text: string) => text.replace(/[ \t\r\n]+/g, ' ').trim();
