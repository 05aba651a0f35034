import type { ParseBudget } from './budget.ts';
import { BLOCK_LEVEL, CHROME, collapse, HEADINGS, SKIPPED } from './html-dom.ts';
import type { Block } from './types.ts';

/**
 * Pages too large for a DOM, read in one pass over the markup: linkedom builds about a kilobyte
 * per element, so a 4 MB page of 125,000 paragraphs took 180 MB. What a reader sees comes out as
 * the structured reading would give it (headings, paragraphs, list items, table rows keyed by
 * their header row), without scripts, styles, hidden elements and, unless nothing else is left,
 * the page's chrome. Only a few open elements are remembered, so the pass stays linear and
 * bounded however the tags nest or fail to close.
 */

/** Elements a page may have before it is read this way rather than through a DOM. */
export const MAX_DOM_ELEMENTS = 30_000;

/** Start tags in `html`, counted only as far as `limit` (one more means "more than the limit"). */
export function countStartTags(html: string, limit: number): number {
  let count = 0;
  for (let at = html.indexOf('<'); at !== -1 && count <= limit; at = html.indexOf('<', at + 1)) {
    if (isLetter(html.charCodeAt(at + 1))) count++;
  }
  return count;
}

// Elements whose content is not markup: it runs to their end tag, whatever it holds.
const RAW_TEXT = new Set(['script', 'style', 'textarea', 'title', 'xmp', 'iframe', 'noembed', 'noframes', 'noscript']);
// Elements that never have content, whether or not they are written as `<br/>`.
const VOID = new Set([
  'area',
  'base',
  'br',
  'col',
  'embed',
  'hr',
  'img',
  'input',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
]);
// Open block elements remembered; deeper nesting is counted, not kept.
const MAX_OPEN = 256;
// How far down the open elements an end tag looks for its start tag; a stray end tag is ignored.
const END_TAG_REACH = 16;

const isLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isNameChar = (c: number) => isLetter(c) || (c >= 48 && c <= 57) || c === 45 || c === 58 || c === 95;
const isSpace = (c: number) => c === 32 || (c >= 9 && c <= 13);

const NAMED: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
  ndash: '\u2013',
  mdash: '\u2014',
  hellip: '\u2026',
  lsquo: '\u2018',
  rsquo: '\u2019',
  ldquo: '\u201c',
  rdquo: '\u201d',
  laquo: '\u00ab',
  raquo: '\u00bb',
  copy: '\u00a9',
  reg: '\u00ae',
  trade: '\u2122',
  middot: '\u00b7',
  bull: '\u2022',
  deg: '\u00b0',
  euro: '\u20ac',
  pound: '\u00a3',
  times: '\u00d7',
};

/** Numeric references and the common named ones; an unknown name stays as written. */
export function decodeHtmlEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-zA-Z]{2,8});/g, (whole, ref: string) => {
    if (ref[0] !== '#') return NAMED[ref] ?? whole;
    const code = ref[1] === 'x' || ref[1] === 'X' ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10);
    return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : '\ufffd';
  });
}

/** Whether a start tag's attributes (the text after its name) include `hidden`, read name by name. */
function hasHidden(attrs: string): boolean {
  const n = attrs.length;
  let i = 0;
  while (i < n) {
    while (i < n && (isSpace(attrs.charCodeAt(i)) || attrs.charCodeAt(i) === 47)) i++;
    const start = i;
    while (i < n && !isSpace(attrs.charCodeAt(i)) && attrs.charCodeAt(i) !== 61 && attrs.charCodeAt(i) !== 47) i++;
    if (i > start && attrs.slice(start, i).toLowerCase() === 'hidden') return true;
    if (i === start) i++;
    while (i < n && isSpace(attrs.charCodeAt(i))) i++;
    if (attrs.charCodeAt(i) !== 61) continue;
    i++;
    while (i < n && isSpace(attrs.charCodeAt(i))) i++;
    const quote = attrs.charCodeAt(i);
    if (quote === 34 || quote === 39) {
      const end = attrs.indexOf(String.fromCharCode(quote), i + 1);
      i = end === -1 ? n : end + 1;
    } else {
      while (i < n && !isSpace(attrs.charCodeAt(i))) i++;
    }
  }
  return false;
}

/** The `>` that ends a tag whose name ends at `from`, past quoted attribute values; -1 when there is none. */
function tagEnd(html: string, from: number): number {
  let quote = 0;
  for (let i = from; i < html.length; i++) {
    const c = html.charCodeAt(i);
    if (quote !== 0) {
      if (c === quote) quote = 0;
    } else if (c === 34 || c === 39) {
      // A quote opens a value only after `=`; elsewhere it is a stray character.
      let j = i - 1;
      while (j >= from && isSpace(html.charCodeAt(j))) j--;
      if (html.charCodeAt(j) === 61) quote = c;
    } else if (c === 62) {
      return i;
    }
  }
  return -1;
}

/** Where the end tag `</name` of a raw-text element starts, in any case, from `from`; -1 when it never comes. */
function rawTextEnd(html: string, name: string, from: number): number {
  for (let at = html.indexOf('</', from); at !== -1; at = html.indexOf('</', at + 2)) {
    if (html.slice(at + 2, at + 2 + name.length).toLowerCase() === name && !isNameChar(html.charCodeAt(at + 2 + name.length))) {
      return at;
    }
  }
  return -1;
}

interface Table {
  headers: string[] | null;
  /** The row being read: its cells so far, and whether each is a header cell. */
  row: { text: string; header: boolean }[] | null;
  /** The cell being read, when one is open. */
  cell: boolean;
  cellHeader: boolean;
  cellText: string;
}

export interface StreamedPage {
  blocks: Block[];
  /** The page's <title>. */
  title: string;
  /** The text of its first <h1>. */
  firstH1: string;
}

/**
 * Reads the page's blocks into `page` in one pass, so that what was read before the budget ran
 * out is kept. With `dropChrome`, navigation, headers, footers, asides, forms and dialogs are
 * left out, as the structured reading leaves them out.
 */
export function streamedBlocks(html: string, budget: ParseBudget, dropChrome: boolean, page: StreamedPage): void {
  const blocks = page.blocks;
  // Open block elements, innermost last: their names decide what kind of block text makes.
  const open: string[] = [];
  let overflow = 0;
  const tables: Table[] = [];
  let inline = '';
  // An element whose content is passed over (a script-like, hidden or chrome element), and how deep in it we are.
  let skipName: string | null = null;
  let skipDepth = 0;

  const keep = (block: Block) => {
    const text = block.text ? budget.take(block.text) : '';
    if (text) blocks.push({ ...block, text });
  };
  const kindHere = (): Pick<Block, 'kind' | 'level'> => {
    for (let i = open.length - 1; i >= Math.max(0, open.length - 2 * END_TAG_REACH); i--) {
      const name = open[i]!;
      if (HEADINGS.has(name)) return { kind: 'heading', level: Number(name.slice(1)) };
      if (name === 'li') return { kind: 'list_item' };
      if (name === 'ul' || name === 'ol' || name === 'table') break;
    }
    return { kind: 'paragraph' };
  };
  const flush = () => {
    const table = tables[tables.length - 1];
    if (table?.cell) return;
    const text = collapse(inline);
    inline = '';
    if (!text) return;
    const kind = kindHere();
    if (kind.kind === 'heading' && kind.level === 1 && !page.firstH1) page.firstH1 = text;
    keep({ ...kind, text });
  };
  const endCell = (table: Table) => {
    if (!table.cell) return;
    table.row ??= [];
    table.row.push({ text: collapse(table.cellText), header: table.cellHeader });
    table.cell = false;
    table.cellText = '';
  };
  const endRow = (table: Table) => {
    endCell(table);
    const row = table.row;
    table.row = null;
    if (!row || row.length === 0) return;
    if (table.headers === null && row.every((cell) => cell.header)) {
      table.headers = row.map((cell) => cell.text);
      return;
    }
    const parts = row
      .map((cell, i) => {
        const header = table.headers?.[i];
        return cell.text && header ? `${header}: ${cell.text}` : cell.text;
      })
      .filter(Boolean);
    table.headers ??= [];
    if (parts.length) keep({ kind: 'table_row', text: parts.join('; ') });
  };
  const push = (name: string) => {
    if (open.length >= MAX_OPEN) overflow++;
    else open.push(name);
  };
  /** Closes the open elements down to `name`, if it is near the top; false when it is not open. */
  const popTo = (name: string): boolean => {
    if (overflow > 0) {
      overflow--;
      return true;
    }
    for (let i = open.length - 1; i >= Math.max(0, open.length - END_TAG_REACH); i--) {
      if (open[i] === name) {
        open.length = i;
        return true;
      }
    }
    return false;
  };

  const start = (name: string, selfClosing: boolean) => {
    const table = tables[tables.length - 1];
    if (name === 'br') {
      if (table?.cell) table.cellText += ' ';
      else inline += '\n';
      return;
    }
    if (!BLOCK_LEVEL.has(name) || VOID.has(name)) return;
    if (table && (name === 'td' || name === 'th')) {
      endCell(table);
      table.cell = true;
      table.cellHeader = name === 'th';
      return;
    }
    if (table && name === 'tr') {
      endRow(table);
      return;
    }
    if (table?.cell && name !== 'table') return;
    flush();
    // A paragraph ends where any block begins; a list item where the next one does.
    if (open[open.length - 1] === 'p') open.pop();
    if (name === 'li') {
      for (let i = open.length - 1; i >= Math.max(0, open.length - END_TAG_REACH); i--) {
        if (open[i] === 'ul' || open[i] === 'ol') break;
        if (open[i] === 'li') {
          open.length = i;
          break;
        }
      }
    }
    if (name === 'table') {
      tables.push({ headers: null, row: null, cell: false, cellHeader: false, cellText: '' });
      return;
    }
    if (!selfClosing) push(name);
  };

  const end = (name: string) => {
    const table = tables[tables.length - 1];
    if (table && (name === 'td' || name === 'th')) return endCell(table);
    if (table && name === 'tr') return endRow(table);
    if (table && name === 'table') {
      endRow(table);
      tables.pop();
      return;
    }
    if (!BLOCK_LEVEL.has(name) || table?.cell) return;
    flush();
    popTo(name);
  };

  const text = (raw: string) => {
    const table = tables[tables.length - 1];
    const value = decodeHtmlEntities(raw);
    if (table?.cell) table.cellText += value;
    else if (!table?.row) inline += value;
  };

  const n = html.length;
  let pos = 0;
  while (pos < n) {
    const lt = html.indexOf('<', pos);
    const textEnd = lt === -1 ? n : lt;
    if (textEnd > pos && skipName === null) text(html.slice(pos, textEnd));
    if (lt === -1) break;
    budget.work();
    if (html.startsWith('<!--', lt)) {
      const close = html.indexOf('-->', lt + 4);
      pos = close === -1 ? n : close + 3;
      continue;
    }
    const next = html.charCodeAt(lt + 1);
    if (next === 33 /* ! */ || next === 63 /* ? */) {
      const close = html.indexOf('>', lt + 2);
      pos = close === -1 ? n : close + 1;
      continue;
    }
    const closing = next === 47; /* / */
    const nameStart = lt + (closing ? 2 : 1);
    let nameEnd = nameStart;
    while (nameEnd < n && isNameChar(html.charCodeAt(nameEnd))) nameEnd++;
    if (nameEnd === nameStart || !isLetter(html.charCodeAt(nameStart))) {
      // Not a tag: the `<` is text.
      if (skipName === null) text('<');
      pos = lt + 1;
      continue;
    }
    const close = tagEnd(html, nameEnd);
    // A tag that never ends takes the rest of the page with it, as in a browser.
    if (close === -1) break;
    pos = close + 1;
    const name = html.slice(nameStart, nameEnd).toLowerCase();
    const selfClosing = html.charCodeAt(close - 1) === 47;

    if (skipName !== null) {
      if (name === skipName && !VOID.has(name)) {
        if (closing) skipDepth--;
        else if (!selfClosing) skipDepth++;
        if (skipDepth === 0) skipName = null;
      }
      continue;
    }
    if (closing) {
      end(name);
      continue;
    }
    if (RAW_TEXT.has(name)) {
      // Its content runs to its end tag; only a <title> is kept.
      const stop = rawTextEnd(html, name, pos);
      if (name === 'title' && !page.title) page.title = collapse(decodeHtmlEntities(html.slice(pos, stop === -1 ? n : stop)));
      pos = stop === -1 ? n : stop;
      continue;
    }
    const attrs = html.slice(nameEnd, selfClosing ? close - 1 : close);
    // The <head> is not passed over whole: its <title> is wanted, and nothing else in it is text.
    const passedOver = (SKIPPED.has(name) && name !== 'head') || (dropChrome && CHROME.has(name)) || hasHidden(attrs);
    if (passedOver) {
      if (!VOID.has(name) && !selfClosing) {
        flush();
        skipName = name;
        skipDepth = 1;
      }
      continue;
    }
    start(name, selfClosing);
  }
  while (tables.length > 0) endRow(tables.pop()!);
  flush();
}
