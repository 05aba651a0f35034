/**
 * What a passage knows of its document (issue 22): the document's title and, where the file carries one, its
 * date. Each chunk is indexed with them, dense and sparse, before its heading path: a "Gross margin" row means
 * nothing until it is known to be Apple's, in the quarter ended June 25, 2022. The answer prompt gives the model
 * the same for each source. What a source shows as its text stays the passage alone.
 */

/** The document row's fields the context is made of. */
export interface ContextSource {
  /** The file's name, or its URL for a web page. */
  name: string;
  /** The title the ingest worker found: the file's own (PDF Info, Office core properties, HTML <title>), else its first heading. */
  title?: string | null;
  /** The file's own date, YYYY-MM-DD. */
  document_date?: string | null;
}

export interface DocumentContext {
  /** The title, with the file's name after it when the name says something the title does not. */
  title: string;
  /** YYYY-MM-DD. */
  date?: string;
}

// A file name's extension says its type, not its subject.
const EXTENSION = /\.[A-Za-z0-9]{1,5}$/u;

const comparable = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

export function documentContext(doc: ContextSource): DocumentContext {
  const name = doc.name.replace(EXTENSION, '').trim() || doc.name;
  const title = doc.title?.trim();
  // The name goes with the title: a user's "2023 Q1 AAPL.pdf" names what a report's own "FORM 10-Q" does not.
  const full = !title ? name : comparable(title).includes(comparable(name)) ? title : `${title} (${name})`;
  const date = doc.document_date && /^\d{4}-\d{2}-\d{2}$/u.test(doc.document_date) ? doc.document_date : undefined;
  return { title: full, ...(date ? { date } : {}) };
}

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/** "2022-07-29" as "July 29, 2022": the words a question uses, for the sparse encoder and the model alike. */
export function spelledDate(iso: string): string {
  const [y, m, d] = iso.split('-').map(Number) as [number, number, number];
  return `${MONTHS[m - 1]} ${d}, ${y}`;
}

/** The line a chunk is indexed under, and the prompt shows above a passage: "Title, dated July 29, 2022". */
export function contextLine(context: DocumentContext): string {
  return context.date ? `${context.title}, dated ${spelledDate(context.date)}` : context.title;
}

/** What a vector carries of the context, so that a source can be put in the prompt with it. */
export function contextMetadata(context: DocumentContext): { doc_title: string; doc_date?: string } {
  return { doc_title: context.title, ...(context.date ? { doc_date: context.date } : {}) };
}

/** The context a vector's metadata carries, or none for a vector written before it did. */
export function contextOf(metadata: Record<string, unknown>): DocumentContext | undefined {
  const { doc_title: title, doc_date: date } = metadata;
  if (typeof title !== 'string' || title === '') return undefined;
  return { title, ...(typeof date === 'string' && /^\d{4}-\d{2}-\d{2}$/u.test(date) ? { date } : {}) };
}
