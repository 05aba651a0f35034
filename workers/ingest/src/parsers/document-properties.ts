import type { OoxmlPackage } from './ooxml.ts';
import { isRelType } from './ooxml.ts';
import { textContent, type XmlElement } from './xml.ts';

/**
 * What a file says about itself, where its format has a place for it: a PDF's Info dictionary, an Office
 * package's docProps/core.xml, an HTML page's <title>. Every passage of the document is indexed with it
 * (src/retrieval/document-context.ts), so that "gross margin" in one company's report is told from the same
 * row in another's.
 */
export interface DocumentProperties {
  title?: string;
  /** The document's own date, as YYYY-MM-DD. */
  date?: string;
}

/** Longer than any real title; a "title" past this is text pasted into the wrong field. */
export const MAX_TITLE_CHARS = 200;

// What tools write when nobody gave a title: no better than none.
const PLACEHOLDER_TITLE =
  /^(untitled|document\d*|doc\d*|presentation\d*|powerpoint presentation|book\d*|workbook\d*|slide \d+|title|microsoft word - .*|new document)$/iu;

const FILE_NAME = /^\S+\.(pdf|docx?|pptx?|xlsx?|csv|txt|md|html?)$/iu;

/** A title as it is indexed: on one line, no placeholder, at most MAX_TITLE_CHARS. */
export function cleanTitle(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined;
  // Control characters (a PDF string's stray bytes) are not part of a title.
  const title = raw
    .replace(/[\p{Cc}\ufeff]/gu, ' ')
    .replace(/\s+/gu, ' ')
    .trim();
  if (title === '' || PLACEHOLDER_TITLE.test(title)) return undefined;
  // An identifier ("0000320193-22-000070", which EDGAR's converter writes) or a file name is no title either.
  if (!/\p{L}/u.test(title) || FILE_NAME.test(title)) return undefined;
  return title.length > MAX_TITLE_CHARS ? `${title.slice(0, MAX_TITLE_CHARS - 1).trimEnd()}…` : title;
}

/**
 * A date as YYYY-MM-DD, from a PDF date ("D:20230427093000-04'00'") or an ISO 8601 one ("2023-04-27T09:30:00Z").
 * Anything else, or a day that does not exist, is no date.
 */
export function isoDate(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined;
  const match = /^\s*(?:D:)?(\d{4})-?(\d{2})-?(\d{2})/u.exec(raw);
  if (!match) return undefined;
  const [, y, m, d] = match as unknown as [string, string, string, string];
  const date = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)));
  if (date.getUTCFullYear() < 1900 || date.getUTCMonth() !== Number(m) - 1 || date.getUTCDate() !== Number(d)) return undefined;
  return `${y}-${m}-${d}`;
}

/** Only the fields that are there, so a spread adds nothing for a file that has neither. */
export function properties(title: unknown, date: unknown): DocumentProperties {
  const t = cleanTitle(title);
  const d = isoDate(date);
  return { ...(t ? { title: t } : {}), ...(d ? { date: d } : {}) };
}

const localName = (el: XmlElement) => el.name.slice(el.name.indexOf(':') + 1);

/** dc:title and dcterms:created of an Office package's core properties, where it has them. */
export function ooxmlProperties(pkg: OoxmlPackage): DocumentProperties {
  const rel = [...pkg.rels('').values()].find((r) => isRelType(r, 'core-properties') && !r.external);
  const core = pkg.tree(rel?.target ?? 'docProps/core.xml');
  if (!core) return {};
  const field = (name: string) => {
    const el = core.children.find((c): c is XmlElement => typeof c !== 'string' && localName(c) === name);
    return el ? textContent(el) : undefined;
  };
  return properties(field('title'), field('created') ?? field('modified'));
}

/** What pdf.js reads of a PDF's Info dictionary. */
export interface PdfInfo {
  info?: unknown;
}

/** A PDF's Info /Title and /CreationDate (else /ModDate). */
export function pdfProperties(metadata: PdfInfo): DocumentProperties {
  const info = (metadata.info ?? {}) as Record<string, unknown>;
  return properties(info.Title, info.CreationDate ?? info.ModDate);
}
