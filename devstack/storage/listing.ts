import type { ObjectMetadata, ObjectRecord } from './records.ts';

export type SortColumn = 'name' | 'updated_at' | 'created_at' | 'last_accessed_at';

export interface ListQuery {
  /** A folder path; '' for the bucket's top level. A missing trailing slash is added. */
  prefix: string;
  /** Narrows to entries whose name, after the prefix, starts with this (case-insensitively). */
  search: string;
  limit: number;
  offset: number;
  sortColumn: SortColumn;
  sortOrder: 'asc' | 'desc';
}

/** One row of a listing: a file, or a folder (every field but name null). */
export interface ListEntry {
  name: string;
  id: string | null;
  updated_at: string | null;
  created_at: string | null;
  last_accessed_at: string | null;
  metadata: ObjectMetadata | null;
}

// Storage caps a page at 1500 rows.
const MAX_LIMIT = 1500;

// Postgres compares lower(name) COLLATE "C": byte order of the UTF-8 text.
const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

const folder = (name: string): ListEntry => ({
  name,
  id: null,
  updated_at: null,
  created_at: null,
  last_accessed_at: null,
  metadata: null,
});

const file = (record: ObjectRecord, name: string): ListEntry => ({
  name,
  id: record.id,
  updated_at: record.updated_at,
  created_at: record.created_at,
  last_accessed_at: record.last_accessed_at,
  metadata: record.metadata,
});

export function normalizePrefix(prefix: string): string {
  return prefix.length > 0 && !prefix.endsWith('/') ? `${prefix}/` : prefix;
}

/**
 * Storage's list (the storage.search function): the direct children of a folder, where
 * a file is an object right under the prefix and a folder is a name segment that has
 * objects below it. Names are relative to the prefix. Sorted by name, folders and
 * files interleave; sorted by a timestamp, folders come first, ordered by name.
 * `objects` must already be the objects whose names start with prefix + search.
 */
export function listEntries(objects: ObjectRecord[], query: ListQuery): ListEntry[] {
  const prefix = normalizePrefix(query.prefix);
  const combined = (prefix + query.search).toLowerCase();
  const limit = Math.min(query.limit, MAX_LIMIT);
  const matching = objects.filter((object) => object.name.toLowerCase().startsWith(combined));
  const entries =
    query.sortColumn === 'name' ? byName(matching, prefix, combined, query.sortOrder) : byTimestamp(matching, prefix, query);
  return entries.slice(query.offset, query.offset + limit);
}

function byName(objects: ObjectRecord[], prefix: string, combined: string, order: 'asc' | 'desc'): ListEntry[] {
  const sorted = [...objects].sort((a, b) => byteOrder(a.name.toLowerCase(), b.name.toLowerCase()));
  if (order === 'desc') sorted.reverse();
  const entries: ListEntry[] = [];
  const seenFolders = new Set<string>();
  for (const object of sorted) {
    const slash = object.name.indexOf('/', combined.length);
    if (slash === -1) {
      entries.push(file(object, object.name.slice(prefix.length)));
      continue;
    }
    // A folder is named after the first object met in it, as the seek in storage.search does.
    const folderPath = object.name.slice(0, slash + 1);
    if (seenFolders.has(folderPath.toLowerCase())) continue;
    seenFolders.add(folderPath.toLowerCase());
    entries.push(folder(folderPath.replace(/\/+$/, '').slice(prefix.length)));
  }
  return entries;
}

function byTimestamp(objects: ObjectRecord[], prefix: string, query: ListQuery): ListEntry[] {
  const first = prefix === '' ? 0 : prefix.split('/').length - 1;
  const levels = (prefix + query.search).split('/').length;
  const direction = query.sortOrder === 'desc' ? -1 : 1;
  const folders = new Set<string>();
  const files: { record: ObjectRecord; name: string }[] = [];
  for (const object of objects) {
    const tokens = object.name.split('/');
    const name = tokens.slice(first, levels).join('/');
    if (tokens.length === levels) files.push({ record: object, name });
    else folders.add(name);
  }
  const column = query.sortColumn as Exclude<SortColumn, 'name'>;
  return [
    ...[...folders].sort((a, b) => direction * byteOrder(a, b)).map(folder),
    ...files.sort((a, b) => direction * a.record[column].localeCompare(b.record[column])).map((f) => file(f.record, f.name)),
  ];
}
