import type { Metadata } from './api.ts';

/** The API answers metadata in its store's key order (shortest first): shown by key instead, the same each time. */
export const entriesOf = (metadata: Metadata) => Object.entries(metadata).sort(([a], [b]) => a.localeCompare(b));

export const valueText = (value: Metadata[string]) => (Array.isArray(value) ? value.join(', ') : String(value));

/** One metadata entry as edited: a list is one item per line, since an item may hold a comma. */
export type Kind = 'text' | 'number' | 'boolean' | 'list';
export interface Entry {
  id: number;
  key: string;
  kind: Kind;
  value: string;
}

export const KINDS: [Kind, string][] = [
  ['text', 'Text'],
  ['number', 'Number'],
  ['boolean', 'Yes or no'],
  ['list', 'List (one per line)'],
];

let nextEntryId = 0;

export const emptyEntry = (): Entry => ({ id: nextEntryId++, key: '', kind: 'text', value: '' });

export function entryOf([key, value]: [string, Metadata[string]]): Entry {
  const id = nextEntryId++;
  if (Array.isArray(value)) return { id, key, kind: 'list', value: value.join('\n') };
  if (typeof value === 'number') return { id, key, kind: 'number', value: String(value) };
  if (typeof value === 'boolean') return { id, key, kind: 'boolean', value: String(value) };
  return { id, key, kind: 'text', value };
}

/** The entries as the API takes them, or what is wrong with each row that cannot be sent (the API checks the rest). */
export function metadataOf(entries: Entry[]): { metadata: Metadata; problems: Map<number, string> } {
  const metadata: Metadata = {};
  const problems = new Map<number, string>();
  for (const entry of entries) {
    const key = entry.key.trim();
    const number = Number(entry.value);
    if (!key) problems.set(entry.id, 'Give this entry a key.');
    else if (Object.hasOwn(metadata, key)) problems.set(entry.id, `Another entry already has the key “${key}”.`);
    else if (entry.kind === 'number' && (entry.value.trim() === '' || !Number.isFinite(number)))
      problems.set(entry.id, 'Enter a number, such as 2025 or 0.5.');
    else if (entry.kind === 'number') metadata[key] = number;
    else if (entry.kind === 'boolean') metadata[key] = entry.value === 'true';
    else if (entry.kind === 'list')
      metadata[key] = entry.value
        .split('\n')
        .map((item) => item.trim())
        .filter(Boolean);
    else metadata[key] = entry.value;
  }
  return { metadata, problems };
}
