import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { bucketAlreadyExists, bucketNotEmpty, noSuchBucket } from './errors.ts';
import type { Layout } from './layout.ts';
import type { KeyedMutex } from './lock.ts';
import { isReservedName } from './names.ts';
import { type BucketRecord, readJsonFile, writeJsonFileAtomic } from './records.ts';
import { objectDirsUnder } from './tree.ts';

export interface BucketSettings {
  public: boolean;
  file_size_limit: number | null;
  allowed_mime_types: string[] | null;
}

export const bucketLockKey = (bucketId: string) => `bucket:${bucketId}`;

/** Buckets as directories under the data root, each with its settings in ~bucket.json. */
export class BucketStore {
  constructor(
    private readonly layout: Layout,
    private readonly lock: KeyedMutex,
    private readonly now: () => number,
  ) {}

  async list(): Promise<BucketRecord[]> {
    let names: string[];
    try {
      names = await readdir(this.layout.rootDir);
    } catch {
      return [];
    }
    const buckets = await Promise.all(names.filter((name) => !isReservedName(name)).map((name) => this.get(name)));
    return buckets.filter((bucket): bucket is BucketRecord => bucket !== undefined);
  }

  get(bucketId: string): Promise<BucketRecord | undefined> {
    return readJsonFile<BucketRecord>(this.layout.bucketFile(bucketId));
  }

  async require(bucketId: string): Promise<BucketRecord> {
    const bucket = await this.get(bucketId);
    if (!bucket) throw noSuchBucket();
    return bucket;
  }

  /** Built in the staging area and renamed into place, so a bucket appears whole or not at all. */
  create(bucketId: string, settings: BucketSettings): Promise<BucketRecord> {
    return this.lock.run(bucketLockKey(bucketId), async () => {
      if (await this.get(bucketId)) throw bucketAlreadyExists();
      const timestamp = new Date(this.now()).toISOString();
      const bucket: BucketRecord = {
        id: bucketId,
        name: bucketId,
        owner: '',
        public: settings.public,
        type: 'STANDARD',
        file_size_limit: settings.file_size_limit,
        allowed_mime_types: settings.allowed_mime_types,
        created_at: timestamp,
        updated_at: timestamp,
      };
      const staged = this.layout.tmpPath();
      await mkdir(staged, { recursive: true });
      try {
        await writeJsonFileAtomic(join(staged, '~bucket.json'), bucket, `${staged}.json`);
        await rename(staged, this.layout.bucketDir(bucketId));
      } catch (error) {
        await rm(staged, { recursive: true, force: true });
        if (error instanceof Error && 'code' in error && (error.code === 'ENOTEMPTY' || error.code === 'EEXIST')) {
          throw bucketAlreadyExists();
        }
        throw error;
      }
      return bucket;
    });
  }

  update(bucketId: string, changes: Partial<BucketSettings>): Promise<BucketRecord> {
    return this.lock.run(bucketLockKey(bucketId), async () => {
      const bucket = await this.require(bucketId);
      const defined = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
      const updated: BucketRecord = { ...bucket, ...defined, updated_at: new Date(this.now()).toISOString() };
      await writeJsonFileAtomic(this.layout.bucketFile(bucketId), updated, this.layout.tmpPath());
      return updated;
    });
  }

  /** Only an empty bucket can go; it is renamed out of sight first, then removed. */
  delete(bucketId: string): Promise<void> {
    return this.lock.run(bucketLockKey(bucketId), async () => {
      await this.require(bucketId);
      if ((await objectDirsUnder(this.layout.bucketDir(bucketId))).length > 0) throw bucketNotEmpty();
      await this.discard(this.layout.bucketDir(bucketId));
    });
  }

  /** Moves every key directory to the trash in one rename each, leaving the bucket's settings. */
  empty(bucketId: string): Promise<void> {
    return this.lock.run(bucketLockKey(bucketId), async () => {
      await this.require(bucketId);
      const bucketDir = this.layout.bucketDir(bucketId);
      for (const name of await readdir(bucketDir)) {
        if (!isReservedName(name)) await this.discard(join(bucketDir, name));
      }
    });
  }

  private async discard(path: string): Promise<void> {
    const trash = this.layout.tmpPath();
    await mkdir(this.layout.tmpDir, { recursive: true });
    await rename(path, trash);
    await rm(trash, { recursive: true, force: true });
  }
}
