import { open, readFile, rename, rm } from 'node:fs/promises';

/** A bucket as Storage's bucket API returns it. */
export interface BucketRecord {
  id: string;
  name: string;
  owner: string;
  public: boolean;
  type: 'STANDARD';
  file_size_limit: number | null;
  allowed_mime_types: string[] | null;
  created_at: string;
  updated_at: string;
}

/** The object metadata Storage keeps per object (storage.objects.metadata). */
export interface ObjectMetadata {
  eTag: string;
  size: number;
  mimetype: string;
  cacheControl: string;
  lastModified: string;
  contentLength: number;
  httpStatusCode: number;
}

/** A row of storage.objects, as Storage returns it from list and remove. */
export interface ObjectRecord {
  id: string;
  bucket_id: string;
  name: string;
  version: string;
  created_at: string;
  updated_at: string;
  last_accessed_at: string;
  metadata: ObjectMetadata;
  user_metadata: Record<string, unknown> | null;
}

export const isMissing = (error: unknown) =>
  error instanceof Error && 'code' in error && (error.code === 'ENOENT' || error.code === 'ENOTDIR');

/** The parsed file, or undefined when it does not exist. */
export async function readJsonFile<T>(file: string): Promise<T | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
  return JSON.parse(text) as T;
}

/** Writes beside the target, flushes, then renames: readers see the old file or the new one, never half of one. */
export async function writeJsonFileAtomic(file: string, value: unknown, tmpPath: string): Promise<void> {
  const handle = await open(tmpPath, 'wx');
  try {
    await handle.writeFile(`${JSON.stringify(value, null, 2)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(tmpPath, file);
  } catch (error) {
    await rm(tmpPath, { force: true });
    throw error;
  }
}
