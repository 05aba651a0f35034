import { packageOfMimetype } from '#core/documents/detect-type.ts';
import { ParseBudget } from './budget.ts';
import { properties } from './document-properties.ts';
import { decodeHtml, htmlDocumentBlocks, MAX_HTML_BYTES } from './html.ts';
import { resolvePart } from './ooxml.ts';
import { type Block, DEFAULT_PARSE_LIMITS, type ParsedDocument, ParseError, type ParseLimits } from './types.ts';
import { child, children, decodeXmlBytes, parseXml, textContent, type XmlElement } from './xml.ts';
import { openZip, type ZipArchive } from './zip.ts';

/**
 * EPUB → its chapters in reading order: META-INF/container.xml names the package document (OPF),
 * whose spine orders the manifest's XHTML chapters; each is read by the HTML reader's structure
 * (headings, paragraphs, lists, tables), without Readability, since a chapter is all content. Items
 * the spine marks non-linear (a cover, a pop-up note) are left out, as a reader leaves them out of
 * the flow. The ZIP is read under the same limits as an Office file's.
 */

const NOT_EPUB = 'The file is not a valid EPUB book';
const CHAPTER_TYPES = new Set(['application/xhtml+xml', 'text/html']);

export function parseEpub(bytes: Uint8Array, limits: ParseLimits = DEFAULT_PARSE_LIMITS): ParsedDocument {
  const zip = openZip(bytes);
  const mimetype = zip.readText('mimetype');
  if (mimetype !== null && packageOfMimetype(mimetype) !== 'epub') throw new ParseError('corrupt', NOT_EPUB);
  if (zip.names.some((name) => name.toLowerCase() === 'meta-inf/encryption.xml') && encryptsContent(zip)) {
    throw new ParseError('encrypted', 'The book is protected by DRM and cannot be read');
  }
  const budget = new ParseBudget(limits);
  const container = xmlPart(zip, 'META-INF/container.xml', budget);
  const rootfile = container && descendant(container, 'rootfile')?.attrs['full-path'];
  const opf = rootfile ? xmlPart(zip, rootfile, budget) : null;
  if (!rootfile || !opf) throw new ParseError('corrupt', NOT_EPUB);

  const metadata = child(opf, 'metadata');
  const field = (name: string) => {
    const el = metadata && child(metadata, name);
    return el ? textContent(el) : undefined;
  };
  const manifest = new Map<string, { href: string; type: string }>();
  for (const item of children(child(opf, 'manifest') ?? opf, 'item')) {
    const { id, href } = item.attrs;
    if (id && href) manifest.set(id, { href: resolvePart(rootfile, href), type: item.attrs['media-type'] ?? '' });
  }
  const chapters = children(child(opf, 'spine') ?? opf, 'itemref')
    .filter((ref) => ref.attrs.linear !== 'no')
    .map((ref) => manifest.get(ref.attrs.idref ?? ''))
    .filter((item): item is { href: string; type: string } => item !== undefined && CHAPTER_TYPES.has(item.type));

  const blocks: Block[] = [];
  const warnings: string[] = [];
  let tooLarge = 0;
  budget.until(() => {
    for (const chapter of chapters) {
      budget.work();
      if ((zip.size(chapter.href) ?? 0) > MAX_HTML_BYTES) {
        tooLarge++;
        continue;
      }
      const data = zip.read(chapter.href);
      if (data === null) continue;
      blocks.push(...htmlDocumentBlocks(decodeHtml(data, 'application/xhtml+xml'), budget).blocks);
    }
  });
  if (tooLarge > 0) {
    warnings.push(
      `${tooLarge} chapter${tooLarge === 1 ? ' is' : 's are'} larger than ${MAX_HTML_BYTES / 2 ** 20} MB of XHTML and ${tooLarge === 1 ? 'was' : 'were'} not read`,
    );
  }
  if (blocks.length === 0 && !budget.exhausted) throw new ParseError('empty', 'The book has no readable text');
  return budget.finish({ blocks, images: [], warnings, ...properties(field('dc:title'), field('dc:date')) });
}

/** A small XML part of the package, or null when it is missing. */
function xmlPart(zip: ZipArchive, name: string, budget: ParseBudget): XmlElement | null {
  const data = zip.read(name);
  return data === null ? null : parseXml(decodeXmlBytes(data), budget);
}

/** Whether META-INF/encryption.xml enciphers anything but fonts (which publishers obfuscate in readable books). */
function encryptsContent(zip: ZipArchive): boolean {
  const xml = zip.readText('META-INF/encryption.xml') ?? '';
  const uris = [...xml.matchAll(/URI\s*=\s*["']([^"']+)["']/g)].map((match) => match[1] ?? '');
  return uris.some((uri) => !/\.(otf|ttf|woff2?)$/i.test(uri));
}

function descendant(el: XmlElement, name: string): XmlElement | undefined {
  for (const c of el.children) {
    if (typeof c === 'string') continue;
    if (c.name === name) return c;
    const found = descendant(c, name);
    if (found) return found;
  }
  return undefined;
}
