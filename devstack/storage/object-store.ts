import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { type FileHandle, mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { bucketLockKey } from './bucket-store.ts';
import { keyAlreadyExists, noSuchBucket, noSuchKey } from './errors.ts';
import type { Layout } from './layout.ts';
import type { KeyedMutex } from './lock.ts';
import { isMissing, type ObjectRecord, readJsonFile, writeJsonFileAtomic } from './records.ts';
import type { StagedFile } from './staging.ts';
import { childKeyDirs, objectDirsUnder, pruneEmptyDirs } from './tree.ts';

export interface ObjectContent {
  mimetype: string;
  cacheControl: string;
  userMetadata: Record<string, unknown> | null;
}

export interface OpenedObject {
  record: ObjectRecord;
  handle: FileHandle;
}

/**
 * Objects as key directories. Writing one renames its staged bytes in under a new
 * version, atomically replaces ~object.json to point at them, then drops the old
 * version: a crash at any step leaves the previous object or the new one, whole.
 */
export class ObjectStore {
  constructor(
    private readonly layout: Layout,
    private readonly lock: KeyedMutex,
    private readonly now: () => number,
  ) {}

  get(bucketId: string, key: string): Promise<ObjectRecord | undefined> {
    return readJsonFile<ObjectRecord>(this.layout.objectFile(this.layout.objectDir(bucketId, key)));
  }

  /** Opens the current version; retried because an overwrite may swap it between the two reads. */
  async open(bucketId: string, key: string): Promise<OpenedObject | undefined> {
    const dir = this.layout.objectDir(bucketId, key);
    for (let attempt = 0; attempt < 3; attempt++) {
      const record = await readJsonFile<ObjectRecord>(this.layout.objectFile(dir));
      if (!record) return undefined;
      try {
        return { record, handle: await open(this.layout.dataFile(dir, record.version), 'r') };
      } catch (error) {
        if (!isMissing(error)) throw error;
      }
    }
    return undefined;
  }

  /**
   * Makes a staged file the object at `key`; without upsert an existing object is a conflict.
   * Objects of one bucket are written side by side (the bucket held shared, the object alone).
   */
  commit(bucketId: string, key: string, staged: StagedFile, content: ObjectContent, upsert: boolean): Promise<ObjectRecord> {
    const objectKey = `object:${this.layout.objectDir(bucketId, key)}`;
    return this.lock.runShared(bucketLockKey(bucketId), () =>
      this.lock.run(objectKey, async () => {
        try {
          return await this.place(bucketId, key, staged, content, upsert);
        } finally {
          await rm(staged.path, { force: true });
        }
      }),
    );
  }

  /** Removes the named objects (exact names, as Storage matches its "prefixes") and returns them. */
  remove(bucketId: string, keys: string[]): Promise<ObjectRecord[]> {
    return this.lock.run(bucketLockKey(bucketId), async () => {
      const removed: ObjectRecord[] = [];
      for (const key of new Set(keys)) {
        const record = await this.unlink(bucketId, key);
        if (record) removed.push(record);
      }
      return removed;
    });
  }

  /**
   * The objects whose names start with `prefix`, compared case-insensitively as
   * Storage's search does. Only directories that can match are walked.
   */
  async findByPrefix(bucketId: string, prefix: string): Promise<ObjectRecord[]> {
    const segments = prefix.toLowerCase().split('/');
    const partial = segments.pop() ?? '';
    let dirs = [this.layout.bucketDir(bucketId)];
    for (const segment of segments) {
      const next: string[] = [];
      for (const dir of dirs) {
        for (const child of await childKeyDirs(dir)) if (child.segment.toLowerCase() === segment) next.push(child.path);
      }
      dirs = next;
    }
    const roots: string[] = [];
    for (const dir of dirs) {
      if (partial === '') roots.push(dir);
      else
        for (const child of await childKeyDirs(dir)) if (child.segment.toLowerCase().startsWith(partial)) roots.push(child.path);
    }
    const records: ObjectRecord[] = [];
    for (const root of roots) {
      for (const dir of await objectDirsUnder(root)) {
        const record = await readJsonFile<ObjectRecord>(this.layout.objectFile(dir));
        if (record?.name.toLowerCase().startsWith(prefix.toLowerCase())) records.push(record);
      }
    }
    return records;
  }

  /** Copies bytes and metadata to another key, possibly in another bucket. */
  async copy(source: { bucketId: string; key: string }, target: { bucketId: string; key: string }, upsert: boolean) {
    const opened = await this.open(source.bucketId, source.key);
    if (!opened) throw noSuchKey();
    const stagingPath = this.layout.tmpPath();
    try {
      await mkdir(this.layout.tmpDir, { recursive: true });
      // From the open handle, so an overwrite of the source during the copy cannot tear it.
      await pipeline(opened.handle.createReadStream({ autoClose: false }), createWriteStream(stagingPath, { flags: 'wx' }));
    } catch (error) {
      await rm(stagingPath, { force: true });
      throw error;
    } finally {
      await opened.handle.close();
    }
    const { metadata, user_metadata } = opened.record;
    return this.commit(
      target.bucketId,
      target.key,
      { path: stagingPath, size: metadata.size, eTag: metadata.eTag },
      { mimetype: metadata.mimetype, cacheControl: metadata.cacheControl, userMetadata: user_metadata },
      upsert,
    );
  }

  /** Renames an object; the target must not exist. */
  move(source: { bucketId: string; key: string }, target: { bucketId: string; key: string }): Promise<ObjectRecord> {
    const locks = [bucketLockKey(source.bucketId), bucketLockKey(target.bucketId)];
    return this.lock.runAll(locks, async () => {
      const record = await this.get(source.bucketId, source.key);
      if (!record) throw noSuchKey();
      if (source.bucketId === target.bucketId && source.key === target.key) return record;
      if (!(await readJsonFile(this.layout.bucketFile(target.bucketId)))) throw noSuchBucket();
      if (await this.get(target.bucketId, target.key)) throw keyAlreadyExists();

      const sourceDir = this.layout.objectDir(source.bucketId, source.key);
      const targetDir = this.layout.objectDir(target.bucketId, target.key);
      const version = randomUUID();
      await mkdir(targetDir, { recursive: true });
      await rename(this.layout.dataFile(sourceDir, record.version), this.layout.dataFile(targetDir, version));
      const moved: ObjectRecord = {
        ...record,
        bucket_id: target.bucketId,
        name: target.key,
        version,
        updated_at: new Date(this.now()).toISOString(),
      };
      await writeJsonFileAtomic(this.layout.objectFile(targetDir), moved, this.layout.tmpPath());
      await rm(this.layout.objectFile(sourceDir), { force: true });
      await this.removeStaleVersions(sourceDir, undefined);
      await pruneEmptyDirs(sourceDir, this.layout.bucketDir(source.bucketId));
      return moved;
    });
  }

  private async place(
    bucketId: string,
    key: string,
    staged: StagedFile,
    content: ObjectContent,
    upsert: boolean,
  ): Promise<ObjectRecord> {
    // The bucket may have been deleted while the body was arriving.
    if (!(await readJsonFile(this.layout.bucketFile(bucketId)))) throw noSuchBucket();
    const dir = this.layout.objectDir(bucketId, key);
    const existing = await readJsonFile<ObjectRecord>(this.layout.objectFile(dir));
    if (existing && !upsert) throw keyAlreadyExists();

    const timestamp = new Date(this.now()).toISOString();
    const version = randomUUID();
    const record: ObjectRecord = {
      id: existing?.id ?? randomUUID(),
      bucket_id: bucketId,
      name: key,
      version,
      created_at: existing?.created_at ?? timestamp,
      updated_at: timestamp,
      last_accessed_at: timestamp,
      metadata: {
        eTag: staged.eTag,
        size: staged.size,
        mimetype: content.mimetype,
        cacheControl: content.cacheControl,
        lastModified: timestamp,
        contentLength: staged.size,
        httpStatusCode: 200,
      },
      user_metadata: content.userMetadata,
    };
    await mkdir(dir, { recursive: true });
    await rename(staged.path, this.layout.dataFile(dir, version));
    await writeJsonFileAtomic(this.layout.objectFile(dir), record, this.layout.tmpPath());
    await this.removeStaleVersions(dir, version);
    return record;
  }

  private async unlink(bucketId: string, key: string): Promise<ObjectRecord | undefined> {
    const dir = this.layout.objectDir(bucketId, key);
    const record = await readJsonFile<ObjectRecord>(this.layout.objectFile(dir));
    if (!record) return undefined;
    await rm(this.layout.objectFile(dir), { force: true });
    await this.removeStaleVersions(dir, undefined);
    await pruneEmptyDirs(dir, this.layout.bucketDir(bucketId));
    return record;
  }

  // Also collects versions orphaned by a crash between writing bytes and switching the metadata.
  private async removeStaleVersions(dir: string, keep: string | undefined): Promise<void> {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (error) {
      if (isMissing(error)) return;
      throw error;
    }
    for (const name of names) {
      if (name.startsWith('~data-') && name !== `~data-${keep}`) await rm(join(dir, name), { force: true });
    }
  }
}
