import type { ParseBudget } from './budget.ts';
import { ParseError } from './types.ts';
import { isXmlSpace, NOT_WITHIN, pieceEnd, TEXT_PIECE_CHARS, Window, type XmlText } from './xml-window.ts';

/**
 * The pull scanner under xml.ts: one pass over an XML part, reporting elements (with names
 * canonicalised by namespace) and text to a handler. Linear in the part's length: namespace
 * lookups are one map access, attributes are read in one pass, and nesting is capped.
 *
 * Safety: no DTD is ever read. Any `<!DOCTYPE` or `<!ENTITY` is refused, so entity
 * expansion (billion laughs, external entities) cannot happen; only the five predefined
 * entities and numeric character references are decoded.
 */

export const UNSAFE_XML_MESSAGE = 'The document contains XML DTD/entity declarations, which are refused for safety';
export const MALFORMED_MESSAGE = 'The document is corrupt: its XML is malformed';

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
  'http://schemas.openxmlformats.org/drawingml/2006/chart': 'c',
  'http://purl.oclc.org/ooxml/drawingml/chart': 'c',
  'http://schemas.openxmlformats.org/drawingml/2006/diagram': 'dgm',
  'http://purl.oclc.org/ooxml/drawingml/diagram': 'dgm',
  'http://schemas.openxmlformats.org/markup-compatibility/2006': 'mc',
  'http://schemas.openxmlformats.org/package/2006/relationships': '',
  'http://schemas.openxmlformats.org/package/2006/content-types': '',
  'urn:schemas-microsoft-com:vml': 'v',
  // OpenDocument (ODT, ODS, ODP) and EPUB's package files.
  'urn:oasis:names:tc:opendocument:xmlns:office:1.0': 'office',
  'urn:oasis:names:tc:opendocument:xmlns:text:1.0': 'text',
  'urn:oasis:names:tc:opendocument:xmlns:table:1.0': 'table',
  'urn:oasis:names:tc:opendocument:xmlns:drawing:1.0': 'draw',
  'urn:oasis:names:tc:opendocument:xmlns:presentation:1.0': 'presentation',
  'urn:oasis:names:tc:opendocument:xmlns:meta:1.0': 'meta',
  'urn:oasis:names:tc:opendocument:xmlns:manifest:1.0': 'manifest',
  'http://www.w3.org/1999/xlink': 'xlink',
  'http://purl.org/dc/elements/1.1/': 'dc',
  'urn:oasis:names:tc:opendocument:xmlns:container': '',
  'http://www.idpf.org/2007/opf': '',
};

const ALTERNATE_CONTENT = 'mc:AlternateContent';

/** Whitespace-only text is dropped except inside text runs, where a lone space is content. */
function keepsWhitespace(name: string): boolean {
  return name === 't' || name.endsWith(':t') || name === 'w:delText' || name === 'w:instrText' || ODF_TEXT.has(name);
}

/** OpenDocument's paragraphs and spans: a space between two spans is a word break. */
const ODF_TEXT = new Set(['text:p', 'text:h', 'text:span', 'text:a']);

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

/** What `open` returns to have the element's content passed over unreported (its close too). */
export const SKIP = 'skip';

export interface ScanHandler {
  open(name: string, attrs: Record<string, string>): typeof SKIP | undefined;
  close(name: string): void;
  text(text: string): void;
}

/**
 * Elements open at once, at most. Word's deepest real nesting (a text box in a table in a text
 * box) is well under a hundred; past this the file is not a document but a trap for the
 * recursive code that reads trees.
 */
export const MAX_XML_DEPTH = 256;

const TOO_DEEP_MESSAGE = `The document is nested more than ${MAX_XML_DEPTH} levels deep and cannot be read`;

interface OpenElement {
  rawName: string;
  name: string;
  /** Prefixes this element bound, unbound again when it closes. */
  declared: string[] | null;
  /** Not reported: an mc:AlternateContent wrapper or the branch of it that was taken. */
  transparent: boolean;
  /** Inside an mc:AlternateContent, whether a branch was already taken (the rest are skipped). */
  branchTaken: boolean;
}

/**
 * The namespace bindings in force: for each prefix, a stack of URIs, innermost last. A lookup
 * is one map access however deep the element, where walking the open elements made a deeply
 * nested file quadratic.
 */
class Namespaces {
  private readonly bound = new Map<string, string[]>();
  // Resolved names while the bindings stay as they are: an element name is looked up once, not per tag.
  private readonly names = new Map<string, string>();

  bind(prefix: string, uri: string): void {
    const stack = this.bound.get(prefix);
    if (stack) stack.push(uri);
    else this.bound.set(prefix, [uri]);
    this.names.clear();
  }

  unbind(prefixes: readonly string[]): void {
    for (const prefix of prefixes) this.bound.get(prefix)?.pop();
    this.names.clear();
  }

  resolve(raw: string, isAttribute: boolean): string {
    // Unprefixed attributes are in no namespace, whatever the default namespace is.
    if (isAttribute && !raw.includes(':')) return raw;
    let name = this.names.get(raw);
    if (name === undefined) {
      name = this.lookup(raw);
      if (this.names.size < 10_000) this.names.set(raw, name);
    }
    return name;
  }

  private lookup(raw: string): string {
    const colon = raw.indexOf(':');
    const prefix = colon === -1 ? '' : raw.slice(0, colon);
    const local = colon === -1 ? raw : raw.slice(colon + 1);
    const stack = this.bound.get(prefix);
    const uri = stack?.[stack.length - 1];
    if (uri === undefined) return raw;
    const canonical = CANONICAL_PREFIX[uri];
    if (canonical === undefined) return prefix === '' ? local : raw;
    return canonical === '' ? local : `${canonical}:${local}`;
  }
}

// Shared by every element without attributes; nothing writes to an element's attributes.
const NO_ATTRIBUTES: Record<string, string> = Object.freeze({});

/**
 * The attributes of a tag's body, from `from` on, in one pass: a name, `=`, a quoted value; a
 * name without a value is skipped. (A regex here backtracked over every long unquoted run.)
 */
function attributes(body: string, from: number): [string, string][] {
  const out: [string, string][] = [];
  const n = body.length;
  let i = from;
  while (i < n) {
    let c = body.charCodeAt(i);
    if (isXmlSpace(c) || c === 47 /* / */ || c === 61 /* = */) {
      i++;
      continue;
    }
    const nameStart = i;
    while (i < n && !isXmlSpace(c) && c !== 61 && c !== 47) c = body.charCodeAt(++i);
    const name = body.slice(nameStart, i);
    while (i < n && isXmlSpace(body.charCodeAt(i))) i++;
    if (body.charCodeAt(i) !== 61) continue;
    i++;
    while (i < n && isXmlSpace(body.charCodeAt(i))) i++;
    const quote = body[i];
    if (quote !== '"' && quote !== "'") continue;
    const end = body.indexOf(quote, i + 1);
    if (end === -1) break;
    out.push([name, body.slice(i + 1, end)]);
    i = end + 1;
  }
  return out;
}

/** Whether `xml` from `from` to `end` (a closing tag's inside) is `name`, perhaps with blanks around it. */
function closes(xml: string, from: number, end: number, name: string): boolean {
  let start = from;
  while (start < end && isXmlSpace(xml.charCodeAt(start))) start++;
  if (!xml.startsWith(name, start)) return false;
  for (let i = start + name.length; i < end; i++) if (!isXmlSpace(xml.charCodeAt(i))) return false;
  return true;
}

/**
 * Scans an XML part, whole or in pieces, and reports its elements and text to `handler`. Given
 * pieces, only what a token needs is held: a part of tens of megabytes is never one string.
 */
export function scan(source: XmlText, handler: ScanHandler, budget: ParseBudget): void {
  const stack: OpenElement[] = [];
  const namespaces = new Namespaces();
  const input = new Window(source);
  // Depth of a skipped subtree (a non-taken mc:AlternateContent branch); 0 when not skipping.
  let skipping = 0;
  let rootSeen = false;
  const malformed = () => new ParseError('corrupt', MALFORMED_MESSAGE);
  const push = (element: OpenElement) => {
    if (stack.length >= MAX_XML_DEPTH) throw new ParseError('corrupt', TOO_DEEP_MESSAGE);
    stack.push(element);
  };

  for (;;) {
    const lt = input.find('<', 0, TEXT_PIECE_CHARS);
    // Text too long to hold until its tag is found goes on as a piece: all that is held, which is
    // most of the string it is cut from, so that the piece does not keep much more alive.
    const textEnd = lt === NOT_WITHIN ? pieceEnd(input.text, input.pos, input.held) : lt === -1 ? input.held : lt;
    if (textEnd > 0 && skipping === 0 && stack.length > 0) {
      const raw = input.text.slice(input.pos, input.pos + textEnd);
      const top = stack[stack.length - 1]!;
      if (raw.trim() !== '' || keepsWhitespace(top.name)) handler.text(decodeEntities(raw));
    }
    if (lt === NOT_WITHIN) {
      input.pos += textEnd;
      budget.work();
      continue;
    }
    if (lt === -1) break;
    input.pos += lt;
    budget.work();

    // From here offsets are from the `<`.
    if (!input.has(2)) throw malformed();
    const next = input.text.charCodeAt(input.pos + 1);
    if (next === 33 /* ! */) {
      if (input.startsWith('<!--')) {
        const end = input.find('-->', 4);
        if (end === -1) throw malformed();
        input.pos += end + 3;
        continue;
      }
      if (input.startsWith('<![CDATA[')) {
        const end = input.find(']]>', 9);
        if (end === -1) throw malformed();
        if (skipping === 0 && stack.length > 0) handler.text(input.text.slice(input.pos + 9, input.pos + end));
        input.pos += end + 3;
        continue;
      }
      // <!DOCTYPE, <!ENTITY, <!ELEMENT ...: any markup declaration means a DTD.
      throw new ParseError('unsafe', UNSAFE_XML_MESSAGE);
    }
    if (next === 63 /* ? */) {
      const end = input.find('?>', 2);
      if (end === -1) throw malformed();
      input.pos += end + 2;
      continue;
    }

    const tagEnd = input.tagEnd(1);
    if (tagEnd === -1) throw malformed();
    // The whole tag is held: read it in place, then move past it.
    const xml = input.text;
    const lt0 = input.pos;
    const end = lt0 + tagEnd;
    input.pos = end + 1;

    if (next === 47 /* / */) {
      const open = stack.pop();
      if (!open || !closes(xml, lt0 + 2, end, open.rawName)) throw malformed();
      if (open.declared) namespaces.unbind(open.declared);
      if (skipping > 0) skipping--;
      else if (!open.transparent) handler.close(open.name);
      continue;
    }

    const selfClosing = xml.charCodeAt(end - 1) === 47;
    const body = xml.slice(lt0 + 1, selfClosing ? end - 1 : end);
    let nameEnd = 0;
    while (nameEnd < body.length && !isXmlSpace(body.charCodeAt(nameEnd))) nameEnd++;
    if (nameEnd === body.length) nameEnd = -1;
    const rawName = nameEnd === -1 ? body : body.slice(0, nameEnd);
    if (rawName === '' || (stack.length === 0 && rootSeen)) throw malformed();
    rootSeen = true;

    if (skipping > 0) {
      if (!selfClosing) {
        skipping++;
        push({ rawName, name: rawName, declared: null, transparent: true, branchTaken: false });
      }
      continue;
    }

    // The element's own declarations apply to its name and attributes, so they are bound first.
    let declared: string[] | null = null;
    const rawAttrs: [string, string][] = [];
    if (nameEnd !== -1) {
      for (const [key, rawValue] of attributes(body, nameEnd)) {
        const value = decodeEntities(rawValue);
        if (key === 'xmlns' || key.startsWith('xmlns:')) {
          const prefix = key === 'xmlns' ? '' : key.slice(6);
          namespaces.bind(prefix, value);
          declared ??= [];
          declared.push(prefix);
        } else {
          rawAttrs.push([key, value]);
        }
      }
    }
    const name = namespaces.resolve(rawName, false);
    const attrs: Record<string, string> = rawAttrs.length > 0 ? {} : NO_ATTRIBUTES;
    for (const [key, value] of rawAttrs) attrs[namespaces.resolve(key, true)] = value;

    const parent = stack[stack.length - 1];
    let transparent = name === ALTERNATE_CONTENT;
    if (parent?.name === ALTERNATE_CONTENT) {
      // Branches say the same thing for different consumers; the first (mc:Choice) is the richest.
      if (parent.branchTaken) {
        if (!selfClosing) {
          skipping = 1;
          push({ rawName, name, declared, transparent: true, branchTaken: false });
        } else if (declared) {
          namespaces.unbind(declared);
        }
        continue;
      }
      parent.branchTaken = true;
      transparent = true;
    }

    const skip = !transparent && handler.open(name, attrs) === SKIP;
    if (selfClosing) {
      if (declared) namespaces.unbind(declared);
      if (!transparent && !skip) handler.close(name);
    } else if (skip) {
      // Its content is scanned as a branch not taken is: names only, no attributes, no text.
      skipping = 1;
      push({ rawName, name, declared, transparent: true, branchTaken: false });
    } else {
      push({ rawName, name, declared, transparent, branchTaken: false });
    }
  }
  if (stack.length > 0 || !rootSeen) throw malformed();
}
