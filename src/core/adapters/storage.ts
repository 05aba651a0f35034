import { createClient } from '@supabase/supabase-js';
import { describeCause, UpstreamError } from './upstream-error.ts';

export interface StorageSettings {
  url: string;
  serviceRoleKey: string;
  bucket: string;
}

export type ObjectBody = Uint8Array | ReadableStream<Uint8Array>;

/** Supabase Storage, reduced to what the service does with files. Keys never start with '/'. */
export interface ObjectStore {
  put(key: string, body: ObjectBody, contentType: string): Promise<void>;
  get(key: string): Promise<Uint8Array>;
  /** Within the bucket, without reading the bytes through the worker. */
  copy(from: string, to: string): Promise<void>;
  /** Removes every object under the prefix (a "folder"), however many there are. */
  removeFolder(prefix: string): Promise<number>;
  remove(keys: string[]): Promise<void>;
  signedUrl(key: string, expiresInSeconds: number): Promise<string>;
  signedUrls(keys: string[], expiresInSeconds: number): Promise<Map<string, string>>;
}

const PAGE = 1000;

export function createObjectStore(settings: StorageSettings): ObjectStore {
  const client = createClient(settings.url, settings.serviceRoleKey, {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
  });
  const bucket = () => client.storage.from(settings.bucket);
  const fail = (what: string, error: unknown): never => {
    throw new UpstreamError('storage', `${what}: ${describeCause(error)}`, { cause: error });
  };

  /** Storage lists one level at a time; folders come back as entries without an id. */
  async function listFiles(prefix: string): Promise<string[]> {
    const files: string[] = [];
    for (let offset = 0; ; offset += PAGE) {
      const { data, error } = await bucket().list(prefix, { limit: PAGE, offset });
      if (error) fail(`list ${prefix}`, error);
      const entries = data ?? [];
      for (const entry of entries) {
        const key = `${prefix}/${entry.name}`;
        if (entry.id) files.push(key);
        else files.push(...(await listFiles(key)));
      }
      if (entries.length < PAGE) return files;
    }
  }

  return {
    async put(key, body, contentType) {
      const { error } = await bucket()
        .upload(key, body, { contentType, upsert: true })
        .catch((cause: unknown) => ({ error: cause }));
      if (error) fail(`upload ${key}`, error);
    },

    async copy(from, to) {
      const { error } = await bucket()
        .copy(from, to)
        .catch((cause: unknown) => ({ error: cause }));
      if (error) fail(`copy ${from}`, error);
    },

    // A plain authenticated GET read once into an ArrayBuffer: supabase-js's download goes
    // through a Blob, which holds a second copy of a 50 MB original for a while.
    async get(key) {
      const url = `${settings.url.replace(/\/+$/, '')}/storage/v1/object/authenticated/${settings.bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;
      const response = await fetch(url, {
        headers: { apikey: settings.serviceRoleKey, authorization: `Bearer ${settings.serviceRoleKey}` },
      }).catch((cause: unknown) => fail(`download ${key}`, cause));
      if (!response.ok) {
        await response.body?.cancel();
        return fail(`download ${key}`, `HTTP ${response.status}`);
      }
      return new Uint8Array(await response.arrayBuffer());
    },

    async removeFolder(prefix) {
      const keys = await listFiles(prefix.replace(/\/+$/, ''));
      for (let i = 0; i < keys.length; i += PAGE) {
        const { error } = await bucket().remove(keys.slice(i, i + PAGE));
        if (error) fail(`remove under ${prefix}`, error);
      }
      return keys.length;
    },

    async remove(keys) {
      for (let i = 0; i < keys.length; i += PAGE) {
        const { error } = await bucket().remove(keys.slice(i, i + PAGE));
        if (error) fail('remove', error);
      }
    },

    async signedUrl(key, expiresIn) {
      const { data, error } = await bucket().createSignedUrl(key, expiresIn);
      if (error || !data) return fail(`sign ${key}`, error);
      return data.signedUrl;
    },

    async signedUrls(keys, expiresIn) {
      const urls = new Map<string, string>();
      if (keys.length === 0) return urls;
      const { data, error } = await bucket().createSignedUrls(keys, expiresIn);
      if (error || !data) return fail('sign urls', error);
      for (const item of data) if (item.path && item.signedUrl) urls.set(item.path, item.signedUrl);
      return urls;
    },
  };
}
