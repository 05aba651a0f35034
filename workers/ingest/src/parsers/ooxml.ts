import { indexOfBytes } from '#core/bytes.ts';
import { isCompoundFile, MAIN_CONTENT_TYPES, type OoxmlType } from '#core/documents/detect-type.ts';
import { MAX_PACKAGE_INFLATED_BYTES } from '#core/limits.ts';
import { ParseBudget } from './budget.ts';
import type { DocumentProperties } from './document-properties.ts';
import { jpegToPng } from './jpeg.ts';
import { type Block, type ExtractedImage, type ParsedDocument, ParseError, type ParseLimits } from './types.ts';
import { children, decodeXmlBytes, decodeXmlPieces, parseXml, type XmlElement, type XmlText } from './xml.ts';
import { openZip, type ZipArchive } from './zip.ts';

/** What DOCX, PPTX and XLSX share: the package (ZIP, content types, relationships) and its images. */

const NOUN: Record<OoxmlType, string> = { docx: 'document', pptx: 'presentation', xlsx: 'workbook' };
const LABEL: Record<OoxmlType, string> = { docx: 'Word document', pptx: 'PowerPoint presentation', xlsx: 'Excel workbook' };

// The stream an encrypted OOXML package is stored in, as its UTF-16LE directory entry name.
const ENCRYPTED_PACKAGE = Array.from('EncryptedPackage', (c) => [c.charCodeAt(0), 0]).flat();

/**
 * An encrypted Office document is not a ZIP but an OLE2 compound file holding an `EncryptedPackage`
 * stream; any other compound file is a legacy binary .doc/.xls/.ppt.
 */
function refuseCompoundFile(bytes: Uint8Array, type: OoxmlType): void {
  if (!isCompoundFile(bytes)) return;
  if (indexOfBytes(bytes, ENCRYPTED_PACKAGE) !== -1) throw new ParseError('encrypted', `The ${NOUN[type]} is password-protected`);
  throw new ParseError(
    'unsupported',
    'Legacy binary Office files (.doc, .xls, .ppt) are not supported; save it as .docx/.xlsx/.pptx',
  );
}

export interface Relationship {
  type: string;
  /** Absolute part name without a leading slash, or the URL for external targets. */
  target: string;
  external: boolean;
}

export interface OoxmlPackage {
  zip: ZipArchive;
  /** The main part (`word/document.xml`, `ppt/presentation.xml`, `xl/workbook.xml`). */
  main: string;
  /** Relationships of a part, by id. */
  rels(part: string): Map<string, Relationship>;
  /** A part's XML text, whole, or null when the package has no such part. */
  xml(part: string): string | null;
  /** A part's XML text in pieces as it inflates, never whole (for `forEachElement`), or null when there is no such part. */
  text(part: string): XmlText | null;
  /** A (small) part parsed whole, or null when the package has no such part. */
  tree(part: string): XmlElement | null;
}

/** Does a relationship type end with this name (transitional and strict URIs differ only before it)? */
export function isRelType(rel: Relationship, name: string): boolean {
  return rel.type.endsWith(`/${name}`);
}

/** Opens an Office package and checks it is the expected kind; every part read counts against `budget`. */
function openPackage(bytes: Uint8Array, type: OoxmlType, budget: ParseBudget): OoxmlPackage {
  refuseCompoundFile(bytes, type);
  const zip = openZip(bytes);
  const xml = (part: string): string | null => {
    const data = zip.read(part);
    return data === null ? null : decodeXmlBytes(data);
  };
  const text = (part: string): XmlText | null => {
    const pieces = zip.chunks(part);
    return pieces === null ? null : decodeXmlPieces(pieces);
  };
  const tree = (part: string): XmlElement | null => {
    const source = text(part);
    return source === null ? null : parseXml(source, budget);
  };
  const relsCache = new Map<string, Map<string, Relationship>>();
  const rels = (part: string): Map<string, Relationship> => {
    let map = relsCache.get(part);
    if (!map) {
      map = readRels(tree(relsPath(part)), part);
      relsCache.set(part, map);
    }
    return map;
  };

  const notThis = () => new ParseError('corrupt', `The file is not a valid ${LABEL[type]}`);
  const contentTypes = tree('[Content_Types].xml');
  if (!contentTypes) throw notThis();
  const officeDocument = [...rels('').values()].find((r) => isRelType(r, 'officeDocument') && !r.external);
  if (!officeDocument) throw notThis();
  const main = officeDocument.target;
  const declared = children(contentTypes, 'Override').find(
    (o) => o.attrs.PartName?.replace(/^\/+/, '').toLowerCase() === main.toLowerCase(),
  )?.attrs.ContentType;
  if (!declared || !MAIN_CONTENT_TYPES[type].test(declared)) {
    const actual = (Object.keys(MAIN_CONTENT_TYPES) as OoxmlType[]).find((t) => declared && MAIN_CONTENT_TYPES[t].test(declared));
    if (actual) throw new ParseError('unsupported', `The file is a ${LABEL[actual]}, not a ${LABEL[type]}`);
    throw notThis();
  }
  return { zip, main, rels, xml, text, tree };
}

/** How a parser reads its main part: streamed as it inflates (`text`), or parsed whole (`tree`). */
interface MainPartReads {
  text: XmlText;
  tree: XmlElement;
}

/** Where every Office parser starts: the package opened and checked, its main part and that part's relationships. */
export interface OfficeDocument<Main> {
  pkg: OoxmlPackage;
  main: Main;
  rels: Map<string, Relationship>;
  budget: ParseBudget;
  images: ImageCollector;
}

/**
 * Opens an Office document for its parser, under a budget of its own: the package (`openPackage`),
 * then its main part, read as `read` says; a package without that part is not a valid document.
 */
export function openOfficeDocument<R extends keyof MainPartReads>(
  bytes: Uint8Array,
  type: OoxmlType,
  limits: ParseLimits,
  read: R,
): OfficeDocument<MainPartReads[R]> {
  const budget = new ParseBudget(limits);
  const pkg = openPackage(bytes, type, budget);
  const main = read === 'text' ? pkg.text(pkg.main) : pkg.tree(pkg.main);
  if (main === null) throw new ParseError('corrupt', `The file is not a valid ${LABEL[type]}`);
  return { pkg, main: main as MainPartReads[R], rels: pkg.rels(pkg.main), budget, images: new ImageCollector(pkg, limits) };
}

/** `word/document.xml` → `word/_rels/document.xml.rels`; the package itself ('') → `_rels/.rels`. */
function relsPath(part: string): string {
  const slash = part.lastIndexOf('/');
  return `${part.slice(0, slash + 1)}_rels/${part.slice(slash + 1)}.rels`;
}

function readRels(root: XmlElement | null, source: string): Map<string, Relationship> {
  const map = new Map<string, Relationship>();
  if (!root) return map;
  for (const rel of children(root, 'Relationship')) {
    const { Id: id, Type: type, Target: target, TargetMode: mode } = rel.attrs;
    if (!id || !type || target === undefined) continue;
    const external = mode === 'External';
    map.set(id, { type, target: external ? target : resolvePart(source, target), external });
  }
  return map;
}

/** Resolves a relationship target against the part that holds the relationship. */
export function resolvePart(source: string, target: string): string {
  const decoded = safeDecode(target.split('#')[0] ?? '');
  const base = decoded.startsWith('/') ? [] : source.split('/').slice(0, -1);
  for (const segment of decoded.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') base.pop();
    else base.push(segment);
  }
  return base.join('/');
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

// ---------------------------------------------------------------------------------------------
// Images

type ImageInfo = { format: 'png' | 'jpeg' | 'gif' | 'bmp'; width: number; height: number };

/** Reads the pixel size from an image's header, without decoding it. */
export function imageInfo(bytes: Uint8Array): ImageInfo | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length >= 24 && view.getUint32(0) === 0x89504e47 && view.getUint32(12) === 0x49484452) {
    return { format: 'png', width: view.getUint32(16), height: view.getUint32(20) };
  }
  if (bytes.length >= 10 && bytes[0] === 0x47 && bytes[1] === 0x49 && bytes[2] === 0x46) {
    return { format: 'gif', width: view.getUint16(6, true), height: view.getUint16(8, true) };
  }
  if (bytes.length >= 26 && bytes[0] === 0x42 && bytes[1] === 0x4d) {
    return { format: 'bmp', width: Math.abs(view.getInt32(18, true)), height: Math.abs(view.getInt32(22, true)) };
  }
  if (bytes.length >= 4 && bytes[0] === 0xff && bytes[1] === 0xd8) {
    // Walk the markers to the frame header (SOFn, except DHT/JPG/DAC which share the range).
    let p = 2;
    while (p + 9 < bytes.length) {
      if (bytes[p] !== 0xff) return null;
      const marker = bytes[p + 1]!;
      if (marker === 0xff) {
        p++;
        continue;
      }
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
        return { format: 'jpeg', width: view.getUint16(p + 7), height: view.getUint16(p + 5) };
      }
      p += 2 + view.getUint16(p + 2);
    }
  }
  return null;
}

interface ImageRef {
  part: string;
  page?: number;
}

/**
 * Collects a document's figures under the limits. The parser notes where each image is placed
 * (`add`); the images are read after the text, one at a time (`read`), so that a caller that
 * stores each as it comes never holds two, and the text is read before images use up the
 * package's inflate budget. Tiny images are decoration and dropped silently; images that cannot
 * be passed on as PNG, those past `maxImages` and those past the budget are counted into
 * warnings, since their content is lost.
 */
export class ImageCollector {
  private readonly refs: ImageRef[] = [];
  private readonly seen = new Set<string>();
  private kept = 0;
  private overLimit = 0;
  private undecodable = 0;
  private tooLarge = 0;

  constructor(
    private readonly pkg: Pick<OoxmlPackage, 'zip'>,
    private readonly limits: ParseLimits,
  ) {}

  /** Notes the image part once, however often it is placed (a logo on every slide is one figure). */
  add(part: string, page?: number): void {
    if (this.seen.has(part)) return;
    this.seen.add(part);
    if (this.pkg.zip.size(part) === null) return;
    this.refs.push({ part, ...(page !== undefined ? { page } : {}) });
  }

  /** Gives each noted image its final page number (a DOCX knows which breaks count only at its end). */
  placePages(page: (noted: number) => number | undefined): void {
    for (const ref of this.refs) {
      if (ref.page === undefined) continue;
      const placed = page(ref.page);
      if (placed === undefined) delete ref.page;
      else ref.page = placed;
    }
  }

  /**
   * The images, each read when it is asked for. With `copy`, an image stored uncompressed is
   * copied out of the file, so that a caller who keeps it does not keep the whole file.
   */
  *read(copy: boolean): Generator<ExtractedImage> {
    const refs = this.refs.splice(0);
    for (const ref of refs) {
      const image = this.readOne(ref, copy);
      if (image) yield image;
    }
  }

  private readOne({ part, page }: ImageRef, copy: boolean): ExtractedImage | null {
    let bytes: Uint8Array | null;
    try {
      bytes = this.pkg.zip.read(part);
    } catch (error) {
      // A broken image costs that image, not the document; a zip bomb still stops everything.
      if (error instanceof ParseError && error.reason === 'unsafe') throw error;
      if (error instanceof ParseError && error.reason === 'too_large') this.tooLarge++;
      else this.undecodable++;
      return null;
    }
    const info = bytes && imageInfo(bytes);
    if (!bytes || !info) return null;
    if (info.width < this.limits.minImageSide || info.height < this.limits.minImageSide) return null;
    if (info.format !== 'png' && info.format !== 'jpeg') {
      this.undecodable++;
      return null;
    }
    if (this.kept >= this.limits.maxImages) {
      this.overLimit++;
      return null;
    }
    const png = info.format === 'png' ? (copy ? bytes.slice() : bytes) : jpegToPng(bytes)?.png;
    if (!png) {
      this.undecodable++;
      return null;
    }
    this.kept++;
    return {
      bytes: png,
      mediaType: 'image/png',
      width: info.width,
      height: info.height,
      origin: 'figure',
      ...(page ? { page } : {}),
    };
  }

  /** Warnings for the images that were lost. */
  warnings(): string[] {
    const out: string[] = [];
    if (this.undecodable > 0) {
      out.push(
        `${this.undecodable} image${this.undecodable === 1 ? ' was' : 's were'} not described: only PNG and JPEG images can be read from Office files`,
      );
    }
    if (this.tooLarge > 0) {
      const mb = Math.round(MAX_PACKAGE_INFLATED_BYTES / 2 ** 20);
      out.push(
        `${this.tooLarge} image${this.tooLarge === 1 ? ' was' : 's were'} not described: the document's contents expand past ${mb} MB`,
      );
    }
    if (this.overLimit > 0) {
      out.push(
        `${this.overLimit} more image${this.overLimit === 1 ? ' was' : 's were'} not described (at most ${this.limits.maxImages} per document)`,
      );
    }
    return out;
  }
}

/** What an Office parser read: its text, and the images it found, still to be read. */
export interface OoxmlText {
  blocks: Block[];
  /** The parser's own warnings; the images' and the budget's follow them. */
  warnings: string[];
  pageCount?: number;
  images: ImageCollector;
  budget: ParseBudget;
  /** The package's core properties (document-properties.ts). */
  properties?: DocumentProperties;
}

/** The document with all of its images read and kept, for a caller without `onImage`. */
export function withImages(text: OoxmlText): ParsedDocument {
  return finish(text, [...text.images.read(true)]);
}

/**
 * The document, each image handed to `onImage` as soon as it is read and dropped after: four
 * 30 MB pictures are never in memory together.
 */
export async function handingOverImages(
  text: OoxmlText,
  onImage: (image: ExtractedImage) => Promise<void>,
): Promise<ParsedDocument> {
  for (const image of text.images.read(false)) await onImage(image);
  return finish(text, []);
}

function finish(text: OoxmlText, images: ExtractedImage[]): ParsedDocument {
  return text.budget.finish({
    blocks: text.blocks,
    images,
    warnings: [...text.warnings, ...text.images.warnings()],
    ...(text.pageCount !== undefined ? { pageCount: text.pageCount } : {}),
    ...text.properties,
  });
}
