import type { DecodeBudget } from './pdf-decode-budget.ts';
import { plural } from './pdf-support.ts';
import { ParseError } from './types.ts';

const mb = (bytes: number) =>
  bytes >= 2 ** 30 ? `${Math.round(bytes / 2 ** 30).toLocaleString('en-US')} GB` : `${Math.round(bytes / 2 ** 20)} MB`;

/** Pages listed by number in a warning; more are counted. */
const LISTED_PAGES = 10;

/** What the decoding budget cost a PDF range that was read, in words for the job's message. */
export function decodeWarnings(decoding: DecodeBudget): string[] {
  const { limits, refusedStreams, pagesCut } = decoding;
  const warnings: string[] = [];
  const streams = refusedStreams.size;
  if (streams > 0) {
    warnings.push(
      `${streams} compressed part${plural(streams)} of the PDF expand${streams === 1 ? 's' : ''} past ${mb(limits.stream)} and ${streams === 1 ? 'was' : 'were'} not read`,
    );
  }
  if (pagesCut.length === 1) {
    warnings.push(`Page ${pagesCut[0]} expands past ${mb(limits.page)} when decompressed; only part of it was read`);
  } else if (pagesCut.length > 1) {
    const listed = pagesCut.slice(0, LISTED_PAGES).join(', ');
    const more = pagesCut.length > LISTED_PAGES ? ` and ${pagesCut.length - LISTED_PAGES} more` : '';
    warnings.push(
      `${pagesCut.length} pages expand past ${mb(limits.page)} each when decompressed; only part of each was read (pages ${listed}${more})`,
    );
  }
  if (decoding.documentSpent) {
    warnings.push(`The PDF expands past ${mb(limits.document)} when decompressed; the pages after that point were not read`);
  }
  return warnings;
}

/** Why a PDF of which nothing could be read failed, when the decoding budget is the reason. */
export function decodeFailure(decoding: DecodeBudget): ParseError | undefined {
  const { refusals, limits } = decoding;
  if (refusals.size === 0) return undefined;
  const limit = refusals.has('stream') ? limits.stream : refusals.has('page') ? limits.page : limits.document;
  return new ParseError('too_large', `The PDF could not be read: its content expands past ${mb(limit)} when decompressed`);
}
