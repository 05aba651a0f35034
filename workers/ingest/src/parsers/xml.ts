import { decodeText } from '#core/documents/text-encoding.ts';
import type { ParseBudget } from './budget.ts';
import { ParseError } from './types.ts';
import { MALFORMED_MESSAGE, SKIP, scan } from './xml-scan.ts';
import type { XmlText } from './xml-window.ts';

export type { XmlText } from './xml-window.ts';

/**
 * A small pull parser for the XML inside Office files. It is not fast-xml-parser on
 * purpose: that builds the whole document as objects (several times the XML's size),
 * while a worksheet part can be tens of megabytes in a 128 MB isolate. Here a parser
 * asks for the elements it wants (`forEachElement`) and only those become trees, and a
 * part may come in pieces as it inflates (`decodeXmlPieces`), so that it is never held
 * whole; the scanning (and its safety: no DTD is ever read) is xml-scan.ts's.
 */

export interface XmlElement {
  /** Name with a canonical prefix for known namespaces (`w:p`, `a:t`, `x:row`, `Relationship`). */
  name: string;
  attrs: Record<string, string>;
  children: XmlNode[];
}

export type XmlNode = XmlElement | string;

/** Elements and text nodes in one tree that is built; past this the tree's end is not read. */
export const MAX_TREE_NODES = 200_000;

/** Decodes an XML part: UTF-8 unless a BOM says UTF-16. */
export function decodeXmlBytes(bytes: Uint8Array): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return decodeText(bytes, 'utf-16le');
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return decodeText(bytes, 'utf-16be');
  return decodeText(bytes, 'utf-8');
}

/**
 * Decodes an XML part piece by piece as it inflates, as `decodeXmlBytes` would decode it whole.
 * (workerd's TextDecoder is only sure to know UTF-8 and UTF-16LE, so UTF-16BE is swapped here.)
 */
export function* decodeXmlPieces(pieces: Iterable<Uint8Array>): Generator<string> {
  let decoder: TextDecoder | undefined;
  let bigEndian = false;
  // The first bytes, until there are two to look for a BOM in; then an odd UTF-16BE byte left over.
  let held = new Uint8Array(0);
  for (const piece of pieces) {
    let bytes = held.byteLength > 0 ? concat(held, piece) : piece;
    held = new Uint8Array(0);
    if (!decoder) {
      if (bytes.byteLength < 2) {
        held = bytes.slice();
        continue;
      }
      bigEndian = bytes[0] === 0xfe && bytes[1] === 0xff;
      decoder = new TextDecoder(bigEndian || (bytes[0] === 0xff && bytes[1] === 0xfe) ? 'utf-16le' : 'utf-8');
    }
    if (bigEndian) {
      if (bytes.byteLength % 2 === 1) {
        held = bytes.slice(-1);
        bytes = bytes.subarray(0, -1);
      }
      bytes = swapPairs(bytes);
    }
    const text = decoder.decode(bytes, { stream: true });
    if (text !== '') yield text;
  }
  if (!decoder) {
    if (held.byteLength > 0) yield decodeXmlBytes(held);
    return;
  }
  const rest = decoder.decode();
  if (rest !== '') yield rest;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a);
  out.set(b, a.byteLength);
  return out;
}

function swapPairs(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.byteLength);
  for (let i = 0; i + 1 < bytes.byteLength; i += 2) {
    out[i] = bytes[i + 1]!;
    out[i + 1] = bytes[i]!;
  }
  return out;
}

/** Parses a whole (small) XML part into a tree. */
export function parseXml(xml: XmlText, budget: ParseBudget): XmlElement {
  let root: XmlElement | null = null;
  forEachElement(
    xml,
    (_name, path) => path.length === 0,
    (el) => {
      root = el;
    },
    budget,
  );
  if (!root) throw new ParseError('corrupt', MALFORMED_MESSAGE);
  return root;
}

/**
 * Lets a selected element whose text runs long be handed over in parts (see forEachElement).
 */
export interface TreeParts {
  /** Characters of text a tree may hold before what it holds is handed over. */
  chars: number;
  /** Whether the tree may be cut now, given its open elements' names from the selected one down. */
  allowed(open: readonly string[]): boolean;
}

/**
 * Streams the document and builds a tree only for elements `select` picks (by name and the
 * names of their ancestors); each is handed to `visit` once closed, then dropped. Selected
 * elements are not searched for further selections inside them. Every tag is a step of the
 * budget, and a tree stops growing at MAX_TREE_NODES (the budget notes the cut), so that one
 * paragraph of a million runs cannot fill the isolate. With `parts`, a tree that holds more
 * than `parts.chars` characters of text is handed over as it stands, and its open elements go on
 * in empty copies, handed over in turn (`continued`): a paragraph of 16 million characters is
 * never held whole.
 */
export function forEachElement(
  xml: XmlText,
  select: (name: string, path: readonly string[]) => boolean,
  visit: (el: XmlElement, path: readonly string[], continued: boolean) => void,
  budget: ParseBudget,
  parts?: TreeParts,
): void {
  const path: string[] = [];
  // The subtree being built: its elements from the selected root down.
  const building: XmlElement[] = [];
  let nodes = 0;
  let cut = false;
  // Characters of text in the tree being built, and whether it continues one handed over before.
  let chars = 0;
  let continued = false;
  const handOver = () => {
    visit(building[0]!, path.slice(0, path.length - building.length), continued);
    continued = true;
    building.forEach((el, i) => {
      const copy: XmlElement = { name: el.name, attrs: el.attrs, children: [] };
      if (i > 0) building[i - 1]!.children.push(copy);
      building[i] = copy;
    });
    nodes = building.length;
    chars = 0;
  };
  const full = () => {
    if (nodes < MAX_TREE_NODES) return false;
    if (!cut) {
      cut = true;
      budget.note(
        `A part of the document has more than ${MAX_TREE_NODES.toLocaleString('en-US')} elements; only its beginning was read`,
      );
    }
    return true;
  };
  scan(
    xml,
    {
      open(name, attrs) {
        // Past the cut the scanner only finds where the element ends, reporting nothing inside it.
        if (building.length > 0 && full()) return SKIP;
        if (building.length > 0) {
          const el: XmlElement = { name, attrs, children: [] };
          building[building.length - 1]!.children.push(el);
          building.push(el);
          nodes++;
        } else if (select(name, path)) {
          building.push({ name, attrs, children: [] });
          nodes = 1;
          cut = false;
          chars = 0;
          continued = false;
        }
        path.push(name);
      },
      close() {
        path.pop();
        const el = building.pop();
        if (!el) return;
        // An array that grew by pushing keeps room for more; a tree of many small elements is mostly that room.
        if (el.children.length > 0) el.children = el.children.slice();
        if (building.length === 0) visit(el, path, continued);
      },
      text(text) {
        const top = building[building.length - 1];
        if (!top || full()) return;
        top.children.push(text);
        nodes++;
        chars += text.length;
        if (parts && chars > parts.chars && parts.allowed(building.map((el) => el.name))) handOver();
      },
    },
    budget,
  );
}

export function isElement(node: XmlNode): node is XmlElement {
  return typeof node !== 'string';
}

/** The first child element with this name. */
export function child(el: XmlElement, name: string): XmlElement | undefined {
  for (const c of el.children) if (typeof c !== 'string' && c.name === name) return c;
  return undefined;
}

/** Child elements with this name. */
export function children(el: XmlElement, name: string): XmlElement[] {
  const out: XmlElement[] = [];
  for (const c of el.children) if (typeof c !== 'string' && c.name === name) out.push(c);
  return out;
}

/** Follows a chain of child names: `path(sp, 'p:nvSpPr', 'p:nvPr', 'p:ph')`. */
export function path(el: XmlElement, ...names: string[]): XmlElement | undefined {
  let current: XmlElement | undefined = el;
  for (const name of names) {
    if (!current) return undefined;
    current = child(current, name);
  }
  return current;
}

/** Descendants with this name in document order, not descending into matches. */
export function descendants(el: XmlElement, name: string, out: XmlElement[] = []): XmlElement[] {
  for (const c of el.children) {
    if (typeof c === 'string') continue;
    if (c.name === name) out.push(c);
    else descendants(c, name, out);
  }
  return out;
}

/** All text under an element, concatenated. */
export function textContent(el: XmlElement): string {
  let out = '';
  for (const c of el.children) out += typeof c === 'string' ? c : textContent(c);
  return out;
}
