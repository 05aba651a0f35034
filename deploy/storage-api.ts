// Split from storage-backup.ts: Storage's REST API and its retries are one job, the backup's directory and manifest another.

import { openAsBlob } from 'node:fs';

export interface StorageTarget {
  /** The project's URL, https://<ref>.supabase.co (or the devstack's). */
  url: string;
  /** The secret key (sb_secret_… or the legacy service_role key): it reads and writes every bucket. */
  serviceKey: string;
  bucket: string;
}

/** An object as the bucket's listing reports it. */
export interface StoredObject {
  key: string;
  size: number;
  content_type: string;
  cache_control: string | null;
  /** As the listing reported them: an unchanged object is not downloaded again. */
  etag: string | null;
  last_modified: string | null;
}

export interface BucketSettings {
  id: string;
  public: boolean;
  file_size_limit: number | null;
  allowed_mime_types: string[] | null;
}

const PAGE = 1000;
const ATTEMPTS = 3;

/** A Storage call that failed: `status` 0 when nothing answered. */
export class StorageCallError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const retryable = (error: unknown) =>
  !(error instanceof StorageCallError) || error.status === 0 || error.status === 429 || error.status >= 500;

export async function withRetries<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= ATTEMPTS || !retryable(error)) throw error;
      await new Promise((done) => setTimeout(done, 500 * 4 ** (attempt - 1)));
    }
  }
}

/** Storage's REST API, reduced to what a backup needs. */
export function storageApi(target: StorageTarget) {
  const base = `${target.url.replace(/\/+$/, '')}/storage/v1`;
  const headers = { apikey: target.serviceKey, authorization: `Bearer ${target.serviceKey}` };
  const objectPath = (key: string) => `${encodeURIComponent(target.bucket)}/${key.split('/').map(encodeURIComponent).join('/')}`;

  async function call(
    path: string,
    init: Omit<RequestInit, 'headers'> & { headers?: Record<string, string> } = {},
  ): Promise<Response> {
    let response: Response;
    try {
      response = await fetch(`${base}${path}`, { ...init, headers: { ...headers, ...init.headers } });
    } catch (error) {
      throw new StorageCallError(0, `Storage could not be reached: ${(error as Error).message}`);
    }
    if (response.ok) return response;
    // Storage answers errors as {statusCode, error, message}; the key is never echoed back.
    const text = await response.text().catch(() => '');
    let message = text.slice(0, 300);
    let status = response.status;
    try {
      const body = JSON.parse(text) as { statusCode?: string; message?: string };
      message = body.message ?? message;
      // A missing bucket or object is HTTP 400 with statusCode "404".
      if (body.statusCode && /^\d{3}$/.test(body.statusCode)) status = Number(body.statusCode);
    } catch {
      // not JSON
    }
    throw new StorageCallError(status, `HTTP ${response.status}: ${message}`);
  }

  return {
    async bucket(): Promise<BucketSettings | undefined> {
      try {
        const found = (await (await call(`/bucket/${encodeURIComponent(target.bucket)}`)).json()) as BucketSettings;
        return {
          id: found.id,
          public: found.public,
          file_size_limit: found.file_size_limit ?? null,
          allowed_mime_types: found.allowed_mime_types ?? null,
        };
      } catch (error) {
        if (error instanceof StorageCallError && error.status === 404) return undefined;
        throw error;
      }
    },

    async createBucket(settings: BucketSettings): Promise<void> {
      await call('/bucket', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...settings, id: target.bucket, name: target.bucket }),
      });
    },

    /** Every object in the bucket. Storage lists one folder level at a time; a folder has no id. */
    async listAll(): Promise<StoredObject[]> {
      const found: StoredObject[] = [];
      const folders = [''];
      for (let folder = folders.pop(); folder !== undefined; folder = folders.pop()) {
        for (let offset = 0; ; offset += PAGE) {
          const page = (await withRetries(async () =>
            (
              await call(`/object/list/${encodeURIComponent(target.bucket)}`, {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify({ prefix: folder, limit: PAGE, offset, sortBy: { column: 'name', order: 'asc' } }),
              })
            ).json(),
          )) as ListedEntry[];
          for (const entry of page) {
            const key = folder === '' ? entry.name : `${folder}/${entry.name}`;
            if (!entry.id) folders.push(key);
            else found.push(listed(key, entry));
          }
          if (page.length < PAGE) break;
        }
      }
      return found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    },

    /** The object's bytes as a stream, or undefined if it went since it was listed. */
    async download(key: string): Promise<Response | undefined> {
      try {
        return await call(`/object/authenticated/${objectPath(key)}`);
      } catch (error) {
        if (error instanceof StorageCallError && error.status === 404) return undefined;
        throw error;
      }
    },

    async upload(key: string, file: string, entry: StoredObject, overwrite: boolean): Promise<void> {
      await call(`/object/${objectPath(key)}`, {
        method: 'POST',
        headers: {
          'content-type': entry.content_type,
          'x-upsert': overwrite ? 'true' : 'false',
          ...(entry.cache_control ? { 'cache-control': entry.cache_control } : {}),
        },
        // A Blob backed by the file: sent with its length, never read whole into memory.
        body: (await openAsBlob(file, { type: entry.content_type })) as unknown as Blob,
      });
    },
  };
}

interface ListedEntry {
  name: string;
  id: string | null;
  updated_at: string | null;
  metadata: { size?: number; mimetype?: string; cacheControl?: string; eTag?: string; lastModified?: string } | null;
}

const listed = (key: string, entry: ListedEntry): StoredObject => ({
  key,
  size: entry.metadata?.size ?? 0,
  content_type: entry.metadata?.mimetype ?? 'application/octet-stream',
  cache_control: entry.metadata?.cacheControl ?? null,
  etag: entry.metadata?.eTag ?? null,
  last_modified: entry.metadata?.lastModified ?? entry.updated_at ?? null,
});
