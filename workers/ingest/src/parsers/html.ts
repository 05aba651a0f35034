import { Readability } from '@mozilla/readability';
// The `worker` build is linkedom pre-bundled as plain ESM: the default entry reaches
// `require('canvas')`, which neither workerd nor the bundler can satisfy.
import { parseHTML } from 'linkedom/worker';
import { ParseBudget } from './budget.ts';
import { properties } from './document-properties.ts';
import {
  BLOCK_LEVEL,
  CHROME,
  collapse,
  type DomDocument,
  type DomElement,
  type DomNode,
  HEADINGS,
  isElement,
  PARAGRAPHS,
  plainTextBlocks,
  SKIPPED,
  TEXT_NODE,
  withinShape,
} from './html-dom.ts';
import { countStartTags, MAX_DOM_ELEMENTS, type StreamedPage, streamedBlocks } from './html-stream.ts';
import { type Block, DEFAULT_PARSE_LIMITS, type ParsedDocument, ParseError, type ParseLimits } from './types.ts';

/**
 * Web pages → blocks. Readability (Firefox Reader View) picks the article out of the
 * navigation, ads and footers; linkedom gives it a DOM without a browser. A page with more
 * elements than a DOM can hold in a worker is read in one pass over its markup instead
 * (html-stream.ts).
 */

/** linkedom builds a DOM of roughly ten times the page's size; past this a 128 MB worker is at risk. */
export const MAX_HTML_BYTES = 5 * 1024 * 1024;

/**
 * Readability is given pages up to this size and depth; larger ones are read by structure
 * without it, and pages deeper than the structured reading's own limit as plain text.
 */
export const MAX_READABILITY_NODES = 30_000;
export const MAX_READABILITY_DEPTH = 64;
const MAX_STRUCTURE_DEPTH = 256;

/**
 * `contentTypeHeader` is the response's Content-Type, for its charset. The page's URL
 * is taken for parity with how pages are fetched but not needed: links are not kept,
 * so nothing has to be resolved against it.
 */
export function parseHtml(
  bytes: Uint8Array,
  contentTypeHeader: string | null,
  _url: string,
  limits: ParseLimits = DEFAULT_PARSE_LIMITS,
): ParsedDocument {
  if (bytes.byteLength > MAX_HTML_BYTES) {
    throw new ParseError('too_large', `The page is larger than ${MAX_HTML_BYTES / 1024 / 1024} MB of HTML`);
  }
  const warnings: string[] = [];
  const budget = new ParseBudget(limits);
  const decoded = decodeHtml(bytes, contentTypeHeader, warnings);
  if (countStartTags(decoded, MAX_DOM_ELEMENTS) > MAX_DOM_ELEMENTS) {
    const [streamed, streamedTitle] = streamedPage(decoded, budget);
    return budget.finish({
      blocks: withTitle(streamed, streamedTitle),
      images: [],
      warnings,
      ...properties(streamedTitle, undefined),
    });
  }
  const html = asFullDocument(decoded);
  const { document } = parseHTML(html) as unknown as { document: DomDocument };
  const root = document.body ?? document.documentElement;
  const blocks: Block[] = [];
  let title = '';
  budget.until(() => {
    if (!root) return;
    if (!withinShape(root, Number.POSITIVE_INFINITY, MAX_STRUCTURE_DEPTH)) {
      plainTextBlocks(root, budget, blocks);
      return;
    }
    // Taken before Readability, which rewrites the document it reads.
    const firstH1 = collapse(document.querySelector('h1')?.textContent ?? '');
    const pageTitle = collapse(document.title ?? '');
    if (!withinShape(root, MAX_READABILITY_NODES, MAX_READABILITY_DEPTH)) {
      blocks.push(...bodyBlocks(root, budget));
      title = chooseTitle(pageTitle, firstH1);
      return;
    }
    const article = readArticle(document, html, budget);
    blocks.push(...article.blocks);
    title = chooseTitle(collapse(article.title ?? pageTitle), firstH1);
  });
  return budget.finish({ blocks: withTitle(blocks, title), images: [], warnings, ...properties(title, undefined) });
}

/**
 * An HTML document read whole by its structure, without Readability or dropping any chrome: an EPUB
 * chapter or an email's body, which are all content. Too many elements for a DOM are read in one pass
 * over the markup, too deep a tree as plain text, as for a page. The budget's stop is the caller's to catch.
 */
export function htmlDocumentBlocks(html: string, budget: ParseBudget): { blocks: Block[]; title: string } {
  if (countStartTags(html, MAX_DOM_ELEMENTS) > MAX_DOM_ELEMENTS) {
    const page: StreamedPage = { blocks: [], title: '', firstH1: '' };
    streamedBlocks(html, budget, false, page);
    return { blocks: page.blocks, title: page.title };
  }
  const { document } = parseHTML(asFullDocument(html)) as unknown as { document: DomDocument };
  const root = document.body ?? document.documentElement;
  const blocks: Block[] = [];
  if (!root) return { blocks, title: '' };
  if (withinShape(root, Number.POSITIVE_INFINITY, MAX_STRUCTURE_DEPTH)) blocks.push(...blocksOf(root, false, budget));
  else plainTextBlocks(root, budget, blocks);
  return { blocks, title: collapse(document.title ?? '') };
}

/** The page's blocks under its title, as the document's level 1. */
function withTitle(blocks: Block[], title: string): Block[] {
  if (!blocks.length) throw new ParseError('empty', 'The page has no readable text');
  const first = blocks[0];
  // Readability demotes the article's <h1> to <h2>; the title is the document's level 1.
  if (first?.kind === 'heading' && first.text === title) first.level = 1;
  else if (title) blocks.unshift({ kind: 'heading', text: title, level: 1 });
  return blocks;
}

/** A page too large for a DOM: its blocks without the chrome (or with it, when nothing else is left), and its title. */
function streamedPage(html: string, budget: ParseBudget): [Block[], string] {
  const page: StreamedPage = { blocks: [], title: '', firstH1: '' };
  budget.until(() => {
    streamedBlocks(html, budget, true, page);
    if (!page.blocks.length) streamedBlocks(html, budget, false, page);
  });
  return [page.blocks, chooseTitle(page.title, page.firstH1)];
}

/** The whole body by structure, without its chrome (or with it, when nothing else is left). */
function bodyBlocks(root: DomElement, budget: ParseBudget): Block[] {
  const blocks = blocksOf(root, true, budget);
  return blocks.length ? blocks : blocksOf(root, false, budget);
}

/** Readability's article, or the body when it finds none; and the article's title. */
function readArticle(document: DomDocument, html: string, budget: ParseBudget): { blocks: Block[]; title?: string } {
  let article: ReturnType<Readability<DomElement>['parse']> = null;
  try {
    article = new Readability<DomElement>(document as never, {
      serializer: (node) => node as unknown as DomElement,
      maxElemsToParse: MAX_READABILITY_NODES,
    }).parse();
  } catch {
    // A page Readability cannot cope with is still read, through the fallback below.
  }
  let blocks = article?.content ? blocksOf(article.content, false, budget) : [];
  if (!blocks.some((b) => b.kind !== 'heading')) {
    // Readability rewrote the document it read, so the fallback gets its own copy.
    const fresh = (parseHTML(html) as unknown as { document: DomDocument }).document;
    const root = fresh.body ?? fresh.documentElement;
    blocks = root ? bodyBlocks(root, budget) : [];
  }
  return { blocks, ...(article?.title ? { title: article.title } : {}) };
}

/**
 * linkedom builds the tree as written and does not infer the <html>, <head> and <body>
 * that HTML5 lets a page leave out: without them the text lands outside the body, or
 * the parser fails on an empty document. So make them explicit.
 */
function asFullDocument(html: string): string {
  if (/<html[\s>]/i.test(html) && /<body[\s>]/i.test(html)) return withoutScriptsBeforeHead(html);
  // [^<>]: a tag's scan stops at the next one, so a page of unclosed tags is not quadratic.
  const inner = html.replace(/<!doctype[^<>]*>|<\/?html\b[^<>]*>/gi, '');
  if (/<body[\s>]/i.test(inner)) return `<!DOCTYPE html><html>${inner}</html>`;
  const headEnd = /<\/head\s*>/i.exec(inner);
  const split = headEnd ? headEnd.index + headEnd[0].length : 0;
  const head = headEnd ? inner.slice(0, split) : '<head></head>';
  return `<!DOCTYPE html><html>${head}<body>${inner.slice(split)}</body></html>`;
}

/**
 * A script before <head> (a hit counter's, as on paulgraham.com) makes linkedom open a body for it,
 * and the page's own <body> then never becomes document.body: the page read as empty. Scripts are
 * never read, so the ones there are dropped.
 */
function withoutScriptsBeforeHead(html: string): string {
  const head = /<head[\s>]/i.exec(html.slice(0, 64 * 1024));
  if (!head) return html;
  const before = html.slice(0, head.index);
  if (!/<script\b/i.test(before)) return html;
  return before.replace(/<script\b[\s\S]*?<\/script\s*>/gi, '') + html.slice(head.index);
}

/**
 * Readability's title is the <title>, with a site name it cannot always strip
 * ("Tides explained | Ocean Weekly"). When it and the page's <h1> name the same
 * thing, one containing the other, the <h1> is the better heading.
 */
function chooseTitle(title: string, firstH1: string): string {
  if (!title || !firstH1) return title || firstH1;
  const [a, b] = [title.toLowerCase(), firstH1.toLowerCase()];
  return a.includes(b) || b.includes(a) ? firstH1 : title;
}

function blocksOf(root: DomElement, dropChrome: boolean, budget: ParseBudget): Block[] {
  const blocks: Block[] = [];
  const blockInside = new Map<DomElement, boolean>();
  let inline = '';
  const keep = (block: Block) => {
    const text = block.text ? budget.take(block.text) : '';
    if (text) blocks.push({ ...block, text });
  };
  const flush = () => {
    keep({ kind: 'paragraph', text: collapse(inline) });
    inline = '';
  };
  const push = (block: Block) => {
    flush();
    keep(block);
  };

  const visit = (node: DomNode) => {
    budget.work();
    if (node.nodeType === TEXT_NODE) {
      inline += node.nodeValue ?? '';
      return;
    }
    if (!isElement(node)) return;
    const element = node as DomElement;
    const tag = element.localName.toLowerCase();
    if (SKIPPED.has(tag) || element.hasAttribute('hidden')) return;
    if (dropChrome && CHROME.has(tag)) return;
    if (HEADINGS.has(tag)) return push({ kind: 'heading', text: collapse(textOf(element)), level: Number(tag.slice(1)) });
    if (tag === 'pre') return push({ kind: 'paragraph', text: preformatted(element.textContent ?? '') });
    if (tag === 'table') {
      flush();
      for (const row of tableRows(element)) keep(row);
      return;
    }
    if (tag === 'li') {
      // The item's own words, then any list nested inside it as items of their own.
      push({ kind: 'list_item', text: collapse(textOf(element, ['ul', 'ol', 'table'])) });
      for (const child of Array.from(element.childNodes)) {
        if (isElement(child) && ['ul', 'ol', 'table'].includes(child.localName.toLowerCase())) visit(child);
      }
      return;
    }
    if (PARAGRAPHS.has(tag) && !hasBlockChild(element, blockInside))
      return push({ kind: 'paragraph', text: collapse(textOf(element)) });
    if (tag === 'br') {
      inline += '\n';
      return;
    }
    if (BLOCK_LEVEL.has(tag) || hasBlockChild(element, blockInside)) {
      flush();
      for (const child of Array.from(element.childNodes)) visit(child);
      flush();
      return;
    }
    inline += textOf(element);
  };
  visit(root);
  flush();
  return blocks;
}

/**
 * Each body row as "Header: value; Header: value", so a row retrieved on its own still
 * says what its numbers are.
 */
function tableRows(table: DomElement): Block[] {
  const rows = rowsOf(table);
  const cellsOf = (row: DomElement) =>
    Array.from(row.childNodes).filter((c): c is DomElement => isElement(c) && ['td', 'th'].includes(c.localName.toLowerCase()));
  const first = rows[0];
  const headerRow =
    first && (first.inHead || cellsOf(first.row).every((cell) => cell.localName.toLowerCase() === 'th')) ? first : undefined;
  const headers = headerRow ? cellsOf(headerRow.row).map((cell) => collapse(textOf(cell))) : [];
  const blocks: Block[] = [];
  const caption = table.querySelector('caption');
  if (caption) blocks.push({ kind: 'paragraph', text: collapse(textOf(caption)) });
  for (const { row } of headerRow ? rows.slice(1) : rows) {
    const parts = cellsOf(row)
      .map((cell, i) => {
        const value = collapse(textOf(cell));
        const header = headers[i];
        return value && header ? `${header}: ${value}` : value;
      })
      .filter(Boolean);
    if (parts.length) blocks.push({ kind: 'table_row', text: parts.join('; ') });
  }
  return blocks.filter((b) => b.text);
}

/** Rows of this table in order, not of tables nested in its cells. */
function rowsOf(table: DomElement): { row: DomElement; inHead: boolean }[] {
  const rows: { row: DomElement; inHead: boolean }[] = [];
  const walk = (node: DomElement, inHead: boolean) => {
    for (const child of Array.from(node.childNodes)) {
      if (!isElement(child)) continue;
      const tag = child.localName.toLowerCase();
      if (tag === 'tr') rows.push({ row: child, inHead });
      else if (tag === 'thead' || tag === 'tbody' || tag === 'tfoot') walk(child, tag === 'thead');
    }
  };
  walk(table, false);
  return rows;
}

/** Text of an element without the skipped parts, and without the excluded children. */
function textOf(element: DomElement, exclude: readonly string[] = []): string {
  let text = '';
  for (const child of Array.from(element.childNodes)) {
    if (child.nodeType === TEXT_NODE) text += child.nodeValue ?? '';
    else if (isElement(child)) {
      const tag = child.localName.toLowerCase();
      if (SKIPPED.has(tag) || exclude.includes(tag) || child.hasAttribute('hidden')) continue;
      const inner = textOf(child, exclude);
      text += tag === 'br' || BLOCK_LEVEL.has(tag) ? ` ${inner} ` : inner;
    }
  }
  return text;
}

/** Whether a block-level element is inside; remembered per element, so nested paragraphs are not searched again and again. */
function hasBlockChild(element: DomElement, seen: Map<DomElement, boolean>): boolean {
  let found = seen.get(element);
  if (found === undefined) {
    found = Array.from(element.childNodes).some(
      (child) => isElement(child) && (BLOCK_LEVEL.has(child.localName.toLowerCase()) || hasBlockChild(child, seen)),
    );
    seen.set(element, found);
  }
  return found;
}

function preformatted(text: string): string {
  const lines = text.split('\n').map((line) => line.trimEnd());
  // Blank lines at either end go; done by hand, as `\n+$` retries from every newline of a long run.
  let start = 0;
  let end = lines.length;
  while (start < end && lines[start] === '') start++;
  while (end > start && lines[end - 1] === '') end--;
  return lines.slice(start, end).join('\n');
}

/**
 * The encoding-sniffing order browsers use, minus statistical guessing: byte order
 * mark, then the Content-Type charset, then a <meta> charset in the first 1024 bytes,
 * then UTF-8.
 */
export function decodeHtml(bytes: Uint8Array, contentTypeHeader: string | null, warnings: string[] = []): string {
  const bom = bomEncoding(bytes);
  if (bom) return new TextDecoder(bom).decode(bytes);
  const fromHeader = /charset\s*=\s*["']?([^;"'\s]+)/i.exec(contentTypeHeader ?? '')?.[1];
  const fromMeta = fromHeader ? undefined : metaCharset(bytes);
  let label = (fromHeader ?? fromMeta ?? 'utf-8').toLowerCase();
  // A <meta> is only readable in an ASCII-compatible encoding, so one claiming UTF-16 is wrong.
  if (fromMeta && label.startsWith('utf-16')) label = 'utf-8';
  try {
    return new TextDecoder(label).decode(bytes);
  } catch {
    warnings.push(`The page declares the unknown character set "${label}"; it was read as UTF-8`);
    return new TextDecoder('utf-8').decode(bytes);
  }
}

function bomEncoding(bytes: Uint8Array): string | null {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  return null;
}

function metaCharset(bytes: Uint8Array): string | undefined {
  // Latin-1 maps each byte to one code point, enough to read ASCII markup in any
  // ASCII-compatible encoding.
  const head = String.fromCharCode(...bytes.subarray(0, 1024));
  for (const tag of head.match(/<meta\b[^>]*>/gi) ?? []) {
    const charset = /charset\s*=\s*["']?\s*([a-z0-9_:.-]+)/i.exec(tag)?.[1];
    if (charset) return charset;
  }
  return undefined;
}
