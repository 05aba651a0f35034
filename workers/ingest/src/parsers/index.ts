import type { DocType } from '#core/documents/detect-type.ts';
import { BudgetSpent } from './budget.ts';
import { parseCsv } from './csv.ts';
import { readDocx } from './docx.ts';
import { parseEml } from './eml.ts';
import { parseEpub } from './epub.ts';
import { parseHtml } from './html.ts';
import { parseImage } from './image.ts';
import { parseJson, parseJsonLines } from './json.ts';
import { readOdf } from './odf.ts';
import { handingOverImages, type OoxmlText, withImages } from './ooxml.ts';
import { parsePdf } from './pdf.ts';
import { readPptx } from './pptx.ts';
import { parseText } from './text.ts';
import { DEFAULT_PARSE_LIMITS, type ExtractedImage, type ParsedDocument, ParseError, type ParseLimits } from './types.ts';
import { readXlsx } from './xlsx.ts';

/** Where a fetched page came from (HTML needs the response's Content-Type for its charset), and for PDFs which pages. */
export interface DocumentSource {
  contentType?: string | null;
  url?: string;
  pages?: { first: number; last: number };
  /** The caller no longer needs `bytes`; a parser may keep them instead of copying. */
  transferBytes?: boolean;
  /** PDFs and Office files hand over each image as it is found rather than in the result. */
  onImage?: (image: ExtractedImage) => Promise<void>;
  /** For an email's attachment: how many emails it is attached inside (eml.ts caps it). */
  emailDepth?: number;
}

const UNREADABLE = 'The file could not be read: it may be corrupt';
const TOO_COMPLEX = 'The file is too large or too complex to be read';

class CallerFailure extends Error {
  constructor(override readonly cause: unknown) {
    super('the caller failed to take an image');
  }
}

/**
 * Parses a document of a known type. Every failure is a ParseError whose message can be
 * shown to the user; anything unexpected inside a parser becomes a generic "corrupt" so
 * that no internals leak into a job's error message.
 */
export async function parseDocument(
  type: DocType,
  bytes: Uint8Array,
  limits: ParseLimits = DEFAULT_PARSE_LIMITS,
  source: DocumentSource = {},
): Promise<ParsedDocument> {
  if (bytes.byteLength === 0) throw new ParseError('empty', 'The file is empty');
  let doc: ParsedDocument;
  const onImage = source.onImage;
  let handedOver = 0;
  const handOver =
    onImage &&
    ((image: ExtractedImage) => {
      handedOver++;
      return onImage(image).catch((cause) => Promise.reject(new CallerFailure(cause)));
    });
  try {
    doc = await dispatch(type, bytes, limits, { ...source, onImage: handOver });
  } catch (error) {
    if (error instanceof ParseError) throw error;
    // The budget ran out before the parser reached any content (in a package's own parts, say).
    if (error instanceof BudgetSpent) throw new ParseError('too_large', TOO_COMPLEX);
    // The caller's own failure (storing an image) is not the document's fault: let it retry.
    if (error instanceof CallerFailure) throw error.cause;
    throw new ParseError('corrupt', UNREADABLE);
  }
  // Part of a paged document may be blank; whether the whole is empty is decided by the caller.
  if (doc.blocks.length === 0 && doc.images.length === 0 && handedOver === 0 && !source.pages) {
    throw new ParseError('empty', 'The document is empty');
  }
  return doc;
}

function dispatch(
  type: DocType,
  bytes: Uint8Array,
  limits: ParseLimits,
  source: DocumentSource,
): Promise<ParsedDocument> | ParsedDocument {
  switch (type) {
    case 'pdf':
      return parsePdf(bytes, limits, { pages: source.pages, transferBytes: source.transferBytes, onImage: source.onImage });
    case 'docx':
      return office(readDocx(bytes, limits), source.onImage);
    case 'pptx':
      return office(readPptx(bytes, limits), source.onImage);
    case 'xlsx':
      return office(readXlsx(bytes, limits), source.onImage);
    case 'odt':
    case 'ods':
    case 'odp':
      return office(readOdf(bytes, type, limits), source.onImage);
    case 'epub':
      return parseEpub(bytes, limits);
    case 'eml':
      return parseEml(bytes, limits, source);
    case 'csv':
      return parseCsv(bytes, limits);
    case 'txt':
    case 'md':
      return parseText(bytes, type, limits);
    case 'html':
      return parseHtml(bytes, source.contentType ?? null, source.url ?? '', limits);
    case 'json':
      return parseJson(bytes, limits);
    case 'jsonl':
      return parseJsonLines(bytes, limits);
    case 'png':
    case 'jpeg':
    case 'webp':
      return parseImage(bytes, type, source);
    default:
      throw new ParseError('unsupported', 'This file type is not supported');
  }
}

/** An Office document, its images handed over one at a time when the caller takes them. */
function office(text: OoxmlText, onImage: DocumentSource['onImage']): Promise<ParsedDocument> | ParsedDocument {
  return onImage ? handingOverImages(text, onImage) : withImages(text);
}
