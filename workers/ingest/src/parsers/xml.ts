import { decodeText } from '#core/documents/text-encoding.ts';
import { ParseError } from './types.ts';

/**
 * A small pull scanner for the XML inside Office files. It is not fast-xml-parser on
 * purpose: that builds the whole document as objects (several times the XML's size),
 * while a worksheet part can be tens of megabytes in a 128 MB isolate. Here a parser
 * asks for the elements it wants (`forEachElement`) and only those become trees.
 *
 * Safety: no DTD is ever read. Any `<!DOCTYPE` or `<!ENTITY` is refused, so entity
 * expansion (billion laughs, external entities) cannot happen; only the five predefined
 * entities and numeric character references are decoded.
 */

export interface XmlElement {
  /** Name with a canonical prefix for known namespaces (`w:p`, `a:t`, `x:row`, `Relationship`). */
  name: string;
  attrs: Record<string, string>;
  children: XmlNode[];
}

export type XmlNode = XmlElement | string;

export const UNSAFE_XML_MESSAGE = 'The document contains XML DTD/entity declarations, which are refused for safety';
const MALFORMED_MESSAGE = 'The document is corrupt: its XML is malformed';

// Producers may pick any prefix; parsers match on these canonical ones. '' means "no prefix".
const CANONICAL_PREFIX: Record<string, string> = {
  'http://schemas.openxmlformats.org/wordprocessingml/2006/main': 'w',
  'http://purl.oclc.org/ooxml/wordprocessingml/main': 'w',
  'http://schemas.openxmlformats.org/drawingml/2006/main': 'a',
  'http://purl.oclc.org/ooxml/drawingml/main': 'a',
  'http://schemas.openxmlformats.org/presentationml/2006/main': 'p',
  'http://purl.oclc.org/ooxml/presentationml/main': 'p',
  'http://schemas.openxmlformats.org/spreadsheetml/2006/main': 'x',
  'http://purl.oclc.org/ooxml/spreadsheetml/main': 'x',
  'http://schemas.openxmlformats.org/officeDocument/2006/relationships': 'r',
  'http://purl.oclc.org/ooxml/officeDocument/relationships': 'r',
  'http://schemas.openxmlformats.org/drawingml/2006/picture': 'pic',
  'http://purl.oclc.org/ooxml/drawingml/picture': 'pic',
  'http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing': 'wp',
  'http://purl.oclc.org/ooxml/drawingml/wordprocessingDrawing': 'wp',
  'http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing': 'xdr',
  'http://purl.oclc.org/ooxml/drawingml/spreadsheetDrawing': 'xdr',
  'http://schemas.openxmlformats.org/markup-compatibility/2006': 'mc',
  'http://schemas.openxmlformats.org/package/2006/relationships': '',
  'http://schemas.openxmlformats.org/package/2006/content-types': '',
  'urn:schemas-microsoft-com:vml': 'v',
};

const ALTERNATE_CONTENT = 'mc:AlternateContent';

/** Whitespace-only text is dropped except inside text runs, where a lone space is content. */
function keepsWhitespace(name: string): boolean {
  return name === 't' || name.endsWith(':t') || name === 'w:delText' || name === 'w:instrText';
}

/** Decodes an XML part: UTF-8 unless a BOM says UTF-16. */
export function decodeXmlBytes(bytes: Uint8Array): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return decodeText(bytes, 'utf-16le');
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return decodeText(bytes, 'utf-16be');
  return decodeText(bytes, 'utf-8');
}

const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** Decodes the predefined entities and numeric references; anything else is left as written. */
export function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(#x[0-9a-fA-F]{1,8}|#[0-9]{1,10}|[a-zA-Z]+);/g, (whole, ref: string) => {
    if (ref.startsWith('#')) {
      const code = ref[1] === 'x' || ref[1] === 'X' ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10);
      const valid = code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff);
      return valid ? String.fromCodePoint(code) : '\uFFFD';
    }
    return PREDEFINED[ref] ?? whole;
  });
}

interface ScanHandler {
  open(name: string, attrs: Record<string, string>): void;
  close(name: string): void;
  text(text: string): void;
}

interface OpenElement {
  rawName: string;
  name: string;
  /** Prefix bindings this element declared, if any. */
  scope: Map<string, string> | null;
  /** Not reported: an mc:AlternateContent wrapper or the branch of it that was taken. */
  transparent: boolean;
  /** Inside an mc:AlternateContent, whether a branch was already taken (the rest are skipped). */
  branchTaken: boolean;
}

function resolveName(raw: string, stack: readonly OpenElement[], own: Map<string, string> | null, isAttribute: boolean): string {
  const colon = raw.indexOf(':');
  const prefix = colon === -1 ? '' : raw.slice(0, colon);
  const local = colon === -1 ? raw : raw.slice(colon + 1);
  // Unprefixed attributes are in no namespace, whatever the default namespace is.
  if (isAttribute && prefix === '') return raw;
  let uri: string | undefined = own?.get(prefix);
  for (let i = stack.length - 1; uri === undefined && i >= 0; i--) uri = stack[i]!.scope?.get(prefix);
  if (uri === undefined) return raw;
  const canonical = CANONICAL_PREFIX[uri];
  if (canonical === undefined) return prefix === '' ? local : raw;
  return canonical === '' ? local : `${canonical}:${local}`;
}

const ATTRIBUTE = /([^\s=/]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;

/** Finds the `>` that ends the tag starting at `from`, skipping quoted attribute values. */
function tagEnd(xml: string, from: number): number {
  let quote = 0;
  for (let i = from; i < xml.length; i++) {
    const c = xml.charCodeAt(i);
    if (quote !== 0) {
      if (c === quote) quote = 0;
    } else if (c === 34 || c === 39) {
      quote = c;
    } else if (c === 62) {
      return i;
    }
  }
  return -1;
}

function scan(xml: string, handler: ScanHandler): void {
  const stack: OpenElement[] = [];
  // Depth of a skipped subtree (a non-taken mc:AlternateContent branch); 0 when not skipping.
  let skipping = 0;
  let rootSeen = false;
  let pos = 0;
  const malformed = () => new ParseError('corrupt', MALFORMED_MESSAGE);

  while (pos < xml.length) {
    const lt = xml.indexOf('<', pos);
    const textEnd = lt === -1 ? xml.length : lt;
    if (textEnd > pos && skipping === 0 && stack.length > 0) {
      const raw = xml.slice(pos, textEnd);
      const top = stack[stack.length - 1]!;
      if (raw.trim() !== '' || keepsWhitespace(top.name)) handler.text(decodeEntities(raw));
    }
    if (lt === -1) break;

    const next = xml.charCodeAt(lt + 1);
    if (next === 33 /* ! */) {
      if (xml.startsWith('<!--', lt)) {
        const end = xml.indexOf('-->', lt + 4);
        if (end === -1) throw malformed();
        pos = end + 3;
        continue;
      }
      if (xml.startsWith('<![CDATA[', lt)) {
        const end = xml.indexOf(']]>', lt + 9);
        if (end === -1) throw malformed();
        if (skipping === 0 && stack.length > 0) handler.text(xml.slice(lt + 9, end));
        pos = end + 3;
        continue;
      }
      // <!DOCTYPE, <!ENTITY, <!ELEMENT ...: any markup declaration means a DTD.
      throw new ParseError('unsafe', UNSAFE_XML_MESSAGE);
    }
    if (next === 63 /* ? */) {
      const end = xml.indexOf('?>', lt + 2);
      if (end === -1) throw malformed();
      pos = end + 2;
      continue;
    }

    const end = tagEnd(xml, lt + 1);
    if (end === -1) throw malformed();
    pos = end + 1;

    if (next === 47 /* / */) {
      const rawName = xml.slice(lt + 2, end).trim();
      const open = stack.pop();
      if (!open || open.rawName !== rawName) throw malformed();
      if (skipping > 0) skipping--;
      else if (!open.transparent) handler.close(open.name);
      continue;
    }

    const selfClosing = xml.charCodeAt(end - 1) === 47;
    const body = xml.slice(lt + 1, selfClosing ? end - 1 : end);
    const nameEnd = body.search(/[\s]/);
    const rawName = nameEnd === -1 ? body : body.slice(0, nameEnd);
    if (rawName === '' || (stack.length === 0 && rootSeen)) throw malformed();
    rootSeen = true;

    if (skipping > 0) {
      if (!selfClosing) {
        skipping++;
        stack.push({ rawName, name: rawName, scope: null, transparent: true, branchTaken: false });
      }
      continue;
    }

    let scope: Map<string, string> | null = null;
    const rawAttrs: [string, string][] = [];
    if (nameEnd !== -1) {
      for (const m of body.slice(nameEnd).matchAll(ATTRIBUTE)) {
        const key = m[1]!;
        const value = decodeEntities(m[2] ?? m[3] ?? '');
        if (key === 'xmlns' || key.startsWith('xmlns:')) {
          scope ??= new Map();
          scope.set(key === 'xmlns' ? '' : key.slice(6), value);
        } else {
          rawAttrs.push([key, value]);
        }
      }
    }
    const name = resolveName(rawName, stack, scope, false);
    const attrs: Record<string, string> = {};
    for (const [key, value] of rawAttrs) attrs[resolveName(key, stack, scope, true)] = value;

    const parent = stack[stack.length - 1];
    let transparent = name === ALTERNATE_CONTENT;
    if (parent?.name === ALTERNATE_CONTENT) {
      // Branches say the same thing for different consumers; the first (mc:Choice) is the richest.
      if (parent.branchTaken) {
        if (!selfClosing) {
          skipping = 1;
          stack.push({ rawName, name, scope, transparent: true, branchTaken: false });
        }
        continue;
      }
      parent.branchTaken = true;
      transparent = true;
    }

    if (!transparent) handler.open(name, attrs);
    if (selfClosing) {
      if (!transparent) handler.close(name);
    } else {
      stack.push({ rawName, name, scope, transparent, branchTaken: false });
    }
  }
  if (stack.length > 0 || !rootSeen) throw malformed();
}

/** Parses a whole (small) XML part into a tree. */
export function parseXml(xml: string): XmlElement {
  let root: XmlElement | null = null;
  forEachElement(
    xml,
    (_name, path) => path.length === 0,
    (el) => {
      root = el;
    },
  );
  if (!root) throw new ParseError('corrupt', MALFORMED_MESSAGE);
  return root;
}

/**
 * Streams the document and builds a tree only for elements `select` picks (by name and the
 * names of their ancestors); each is handed to `visit` once closed, then dropped. Selected
 * elements are not searched for further selections inside them.
 */
export function forEachElement(
  xml: string,
  select: (name: string, path: readonly string[]) => boolean,
  visit: (el: XmlElement, path: readonly string[]) => void,
): void {
  const path: string[] = [];
  // The subtree being built: its elements from the selected root down.
  const building: XmlElement[] = [];
  scan(xml, {
    open(name, attrs) {
      if (building.length > 0) {
        const el: XmlElement = { name, attrs, children: [] };
        building[building.length - 1]!.children.push(el);
        building.push(el);
      } else if (select(name, path)) {
        building.push({ name, attrs, children: [] });
      }
      path.push(name);
    },
    close() {
      path.pop();
      const el = building.pop();
      if (el && building.length === 0) visit(el, path);
    },
    text(text) {
      const top = building[building.length - 1];
      if (top) top.children.push(text);
    },
  });
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
