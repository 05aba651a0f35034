import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parseEnvFile } from './settings.ts';
import {
  type BucketSettings,
  StorageCallError,
  type StorageTarget,
  type StoredObject,
  storageApi,
  withRetries,
} from './storage-api.ts';

// `npx tsx deploy/storage-backup.ts export --to DIR` and `import --from DIR`: a project's Storage bucket
// (the originals, figures and scanned pages) copied out to a directory and back in, through Storage's REST
// API with the secret (service-role) key. Supabase's database backups and PITR do not cover Storage, and
// re-chunking reads the originals. docs/operations.md → "Backups and restore".
//
// DIR holds manifest.json (each key with its size, type, cache control and SHA-256) and objects/<sha256>,
// one file per distinct content: a re-chunk's copy of an original costs nothing twice. An export into a
// DIR that holds an earlier export downloads only what changed; an import skips keys the bucket already
// holds, so either can be run again after it stopped part-way.

export type { StorageTarget } from './storage-api.ts';

/** An object of the bucket as the backup holds it: as listed, and the file of its content. */
export interface BackupEntry extends StoredObject {
  sha256: string;
}

export interface Manifest {
  format: 1;
  /** False until every listed object is in objects/: an import refuses it. */
  complete: boolean;
  source: string;
  exported_at: string;
  bucket: BucketSettings;
  objects: BackupEntry[];
}

export interface TransferOptions {
  /** Objects moved at once (default 4). */
  concurrency?: number;
  log?: (line: string) => void;
}

const MANIFEST = 'manifest.json';
const OBJECTS = 'objects';

/** Keys Storage itself would refuse, and any that could name a path outside a directory. */
export function isSafeKey(key: string): boolean {
  if (key.length === 0 || key.length > 1024 || key.startsWith('/') || key.includes('\0')) return false;
  return key.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

/** Runs `work` on every item, `concurrency` at a time; the failures are returned, not thrown. */
async function eachLimited<T>(items: T[], concurrency: number, work: (item: T) => Promise<void>) {
  const failures: { item: T; error: unknown }[] = [];
  let next = 0;
  const runner = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      try {
        await work(item);
      } catch (error) {
        failures.push({ item, error });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, runner));
  return failures;
}

const reasonOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

async function readManifest(dir: string): Promise<Manifest | undefined> {
  try {
    return JSON.parse(await readFile(join(dir, MANIFEST), 'utf8')) as Manifest;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`${join(dir, MANIFEST)} could not be read: ${reasonOf(error)}`);
  }
}

/** Written beside, then renamed over: a manifest is never half written. */
async function writeManifest(dir: string, manifest: Manifest) {
  const temporary = join(dir, `${MANIFEST}.${randomBytes(4).toString('hex')}.tmp`);
  await writeFile(temporary, `${JSON.stringify(manifest, null, 1)}\n`);
  await rename(temporary, join(dir, MANIFEST));
}

async function sizeOf(file: string): Promise<number | undefined> {
  try {
    return (await stat(file)).size;
  } catch {
    return undefined;
  }
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Copies the bucket into `dir`. An object listed with the same size and ETag (or time) as in the manifest
 * already there, whose file is present, is not downloaded again. Objects that went from the bucket leave
 * the manifest, and their files go once no entry names them.
 */
export async function exportBucket(target: StorageTarget, dir: string, options: TransferOptions = {}) {
  const log = options.log ?? (() => {});
  const api = storageApi(target);
  const bucket = await api.bucket();
  if (!bucket) throw new Error(`the project has no bucket ${target.bucket}`);
  await mkdir(join(dir, OBJECTS), { recursive: true });
  const previous = new Map((await readManifest(dir))?.objects.map((entry) => [entry.key, entry]) ?? []);

  const objects = await api.listAll();
  const unsafe = objects.filter((object) => !isSafeKey(object.key));
  if (unsafe.length > 0) throw new Error(`the bucket holds keys that cannot be copied safely: ${unsafe[0]?.key}`);
  log(`${objects.length} objects in bucket ${target.bucket}`);

  const entries = new Map<string, BackupEntry>();
  const toFetch: StoredObject[] = [];
  for (const object of objects) {
    const before = previous.get(object.key);
    const unchanged =
      before &&
      before.size === object.size &&
      (object.etag ? before.etag === object.etag : before.last_modified === object.last_modified) &&
      (await sizeOf(join(dir, OBJECTS, before.sha256))) === before.size;
    if (unchanged) entries.set(object.key, { ...object, sha256: before.sha256 });
    else toFetch.push(object);
  }

  const manifest = (complete: boolean): Manifest => ({
    format: 1,
    complete,
    source: new URL(target.url).host,
    exported_at: new Date().toISOString(),
    bucket,
    objects: objects.flatMap((object) => entries.get(object.key) ?? []),
  });
  let bytes = 0;
  let gone = 0;
  let lastSaved = Date.now();
  const failures = await eachLimited(toFetch, options.concurrency ?? 4, async (object) => {
    const fetched = await withRetries(async () => {
      const response = await api.download(object.key);
      if (!response?.body) return undefined;
      const partial = join(dir, OBJECTS, `.partial-${randomBytes(8).toString('hex')}`);
      const hash = createHash('sha256');
      let size = 0;
      try {
        await pipeline(
          Readable.fromWeb(response.body as unknown as WebReadableStream<Uint8Array>),
          async function* (chunks: AsyncIterable<Buffer>) {
            for await (const chunk of chunks) {
              hash.update(chunk);
              size += chunk.length;
              yield chunk;
            }
          },
          createWriteStream(partial),
        );
      } catch (error) {
        await rm(partial, { force: true });
        throw new StorageCallError(0, `the download of ${object.key} broke off: ${reasonOf(error)}`);
      }
      const sha256 = hash.digest('hex');
      await rename(partial, join(dir, OBJECTS, sha256));
      return { sha256, size };
    });
    if (!fetched) {
      gone++;
      return;
    }
    // Replaced between the listing and the download: the bytes read are what is kept.
    entries.set(object.key, { ...object, size: fetched.size, sha256: fetched.sha256 });
    bytes += fetched.size;
    if (Date.now() - lastSaved > 10_000) {
      lastSaved = Date.now();
      await writeManifest(dir, manifest(false));
    }
  });

  const complete = failures.length === 0;
  await writeManifest(dir, manifest(complete));
  if (complete) {
    const kept = new Set([...entries.values()].map((entry) => entry.sha256));
    for (const name of await readdir(join(dir, OBJECTS))) {
      if ((/^[0-9a-f]{64}$/.test(name) && !kept.has(name)) || name.startsWith('.partial-')) {
        await rm(join(dir, OBJECTS, name), { force: true });
      }
    }
  }
  const result = {
    objects: entries.size,
    downloaded: toFetch.length - failures.length - gone,
    unchanged: objects.length - toFetch.length,
    gone,
    bytes,
    failed: failures.map(({ item, error }) => `${item.key}: ${reasonOf(error)}`),
  };
  log(
    `${result.downloaded} downloaded (${bytes} bytes), ${result.unchanged} unchanged since the last export, ` +
      `${gone} deleted while listed, ${failures.length} failed`,
  );
  return result;
}

/**
 * Copies a backup into the bucket, creating the bucket (with the exported bucket's settings) if the project
 * has none. Each file is checked against its SHA-256 before it is sent. A key the bucket already holds is
 * left as it is unless `overwrite`: restoring into a live bucket adds what is missing and changes nothing else.
 */
export async function importBucket(target: StorageTarget, dir: string, options: TransferOptions & { overwrite?: boolean } = {}) {
  const log = options.log ?? (() => {});
  const manifest = await readManifest(dir);
  if (!manifest) throw new Error(`${dir} holds no ${MANIFEST}: not a backup made by this script`);
  if (manifest.format !== 1) throw new Error(`${MANIFEST} is of format ${manifest.format}, which this script does not read`);
  if (!manifest.complete) throw new Error('the export into this directory did not finish: run the export again first');
  const unsafe = manifest.objects.find((entry) => !isSafeKey(entry.key) || !/^[0-9a-f]{64}$/.test(entry.sha256));
  if (unsafe) throw new Error(`${MANIFEST} names a key or file that cannot be used safely: ${unsafe.key}`);

  const api = storageApi(target);
  if (!(await api.bucket())) {
    log(`creating bucket ${target.bucket} as the exported one was (public: ${manifest.bucket.public})`);
    await api.createBucket(manifest.bucket);
  }
  const present = options.overwrite ? new Set<string>() : new Set((await api.listAll()).map((object) => object.key));
  const toSend = manifest.objects.filter((entry) => !present.has(entry.key));
  log(`${manifest.objects.length} objects in the backup of ${manifest.exported_at}; ${toSend.length} to upload`);

  let bytes = 0;
  const failures = await eachLimited(toSend, options.concurrency ?? 4, async (entry) => {
    const file = join(dir, OBJECTS, entry.sha256);
    const size = await sizeOf(file);
    if (size !== entry.size || (await sha256Of(file)) !== entry.sha256) {
      throw new Error(`its file ${OBJECTS}/${entry.sha256} is missing or not the bytes exported`);
    }
    await withRetries(() => api.upload(entry.key, file, entry, options.overwrite ?? false));
    bytes += entry.size;
  });
  const result = {
    uploaded: toSend.length - failures.length,
    skipped: manifest.objects.length - toSend.length,
    bytes,
    failed: failures.map(({ item, error }) => `${item.key}: ${reasonOf(error)}`),
  };
  log(`${result.uploaded} uploaded (${bytes} bytes), ${result.skipped} already in the bucket, ${failures.length} failed`);
  return result;
}

/** SUPABASE_URL, SUPABASE_SERVICE_ROLE_KEY and STORAGE_BUCKET from a settings file, else from the environment. */
function targetFrom(flags: { settings?: string; bucket?: string }, manifestBucket?: string): StorageTarget {
  const settings = flags.settings ? parseEnvFile(readFileSync(resolve(flags.settings), 'utf8')) : process.env;
  const where = flags.settings ?? 'the environment';
  const url = settings.SUPABASE_URL;
  const serviceKey = settings.SUPABASE_SERVICE_ROLE_KEY;
  if (!url) throw new Error(`${where} does not set SUPABASE_URL`);
  if (!serviceKey) throw new Error(`${where} does not set SUPABASE_SERVICE_ROLE_KEY`);
  return { url, serviceKey, bucket: flags.bucket || settings.STORAGE_BUCKET || manifestBucket || 'documents' };
}

async function main() {
  const { values: flags, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      to: { type: 'string' },
      from: { type: 'string' },
      settings: { type: 'string' },
      bucket: { type: 'string' },
      concurrency: { type: 'string', default: '4' },
      overwrite: { type: 'boolean', default: false },
    },
  });
  const command = positionals[0];
  const concurrency = Number(flags.concurrency);
  const log = (line: string) => console.log(`storage-backup: ${line}`);
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error('--concurrency takes a whole number, at least 1');
  if (command === 'export' && flags.to) {
    const target = targetFrom(flags);
    log(`exporting bucket ${target.bucket} of ${new URL(target.url).host} to ${flags.to}`);
    const result = await exportBucket(target, flags.to, { concurrency, log });
    for (const line of result.failed) console.error(`storage-backup: failed: ${line}`);
    if (result.failed.length > 0) throw new Error('the export is incomplete: run the same command again to finish it');
  } else if (command === 'import' && flags.from) {
    const target = targetFrom(flags, (await readManifest(flags.from))?.bucket.id);
    log(`importing ${flags.from} into bucket ${target.bucket} of ${new URL(target.url).host}`);
    const result = await importBucket(target, flags.from, { concurrency, log, overwrite: flags.overwrite });
    for (const line of result.failed) console.error(`storage-backup: failed: ${line}`);
    if (result.failed.length > 0) throw new Error('some objects were not imported: run the same command again');
  } else {
    throw new Error(
      'usage: npx tsx deploy/storage-backup.ts export --to DIR | import --from DIR [--overwrite]\n' +
        '       [--settings .env.production] [--bucket NAME] [--concurrency 4]',
    );
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    console.error(`storage-backup: ${reasonOf(error)}`);
    process.exit(1);
  });
}
