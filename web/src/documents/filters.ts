import type { Doc, Job } from './api.ts';
import { isRunning } from './jobs.ts';
import { valueText } from './metadata.ts';
import { type Status, stateOf } from './status.ts';

const STATUS_FILTERS = {
  all: () => true,
  indexed: (status: Status) => status === 'indexed' || status === 'partial',
  running: (status: Status) => status === 'running',
  problem: (status: Status) => status === 'failed' || status === 'partial',
};
export type StatusFilter = keyof typeof STATUS_FILTERS;

/** What the search box and the two menus ask for; an empty type is any type. */
export interface Filters {
  search: string;
  type: string;
  status: StatusFilter;
}

export interface Sort {
  by: 'name' | 'date';
  descending: boolean;
}

/** A new version being indexed is shown in the row of the document it replaces, not as a row of its own. */
export function listedDocuments(docs: Doc[], jobs: Job[]) {
  const newVersions = new Set(jobs.filter((job) => isRunning(job) && job.replaces_document_id).map((job) => job.document_id));
  return docs.filter((doc) => !newVersions.has(doc.id));
}

/** The types the documents have, for the type menu. */
export const typesOf = (docs: Doc[]) => [...new Set(docs.map((doc) => doc.type).filter((t): t is string => t !== null))].sort();

/** What the search box looks in: the name, the title, and every metadata key and value. */
const searchText = (doc: Doc) =>
  [doc.name, doc.title ?? '', ...Object.entries(doc.metadata).map(([key, value]) => `${key} ${valueText(value)}`)]
    .join(' ')
    .toLowerCase();

const compare =
  ({ by, descending }: Sort) =>
  (a: Doc, b: Doc) =>
    (descending ? -1 : 1) * (by === 'name' ? a.name.localeCompare(b.name) : a.created_at.localeCompare(b.created_at));

/** The documents that match every word searched for, the type and the status, in the order chosen. */
export function shownDocuments(docs: Doc[], jobs: Job[], { search, type, status }: Filters, sort: Sort) {
  const words = search.trim().toLowerCase().split(/\s+/).filter(Boolean);
  return docs
    .filter((doc) => (!type || doc.type === type) && STATUS_FILTERS[status](stateOf(doc, jobs).status))
    .filter((doc) => words.every((word) => searchText(doc).includes(word)))
    .sort(compare(sort));
}
