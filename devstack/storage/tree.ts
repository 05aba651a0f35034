import type { Dirent } from 'node:fs';
import { readdir, rmdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { decodeSegment, isReservedName } from './names.ts';
import { isMissing } from './records.ts';

const OBJECT_FILE = '~object.json';

/** The key directories directly below `dir`, with their decoded segment names. */
export async function childKeyDirs(dir: string): Promise<{ segment: string; path: string }[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if (isMissing(error)) return [];
    throw error;
  }
  return entries
    .filter((entry) => entry.isDirectory() && !isReservedName(entry.name))
    .map((entry) => ({ segment: decodeSegment(entry.name), path: join(dir, entry.name) }));
}

/** Every directory at or below `dir` that holds an object's metadata file. */
export async function objectDirsUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  const visit = async (current: string): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(current, { withFileTypes: true });
    } catch (error) {
      if (isMissing(error)) return;
      throw error;
    }
    if (entries.some((entry) => entry.isFile() && entry.name === OBJECT_FILE)) found.push(current);
    for (const entry of entries) {
      if (entry.isDirectory() && !isReservedName(entry.name)) await visit(join(current, entry.name));
    }
  };
  await visit(dir);
  return found;
}

/** Removes `dir` and then each parent that is left empty, stopping at `stopAt`. */
export async function pruneEmptyDirs(dir: string, stopAt: string): Promise<void> {
  let current = dir;
  while (current.startsWith(`${stopAt}/`)) {
    try {
      await rmdir(current);
    } catch (error) {
      // Not empty: nothing above it can be empty either.
      if (!isMissing(error)) return;
    }
    current = dirname(current);
  }
}
