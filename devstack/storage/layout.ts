import { randomUUID } from 'node:crypto';
import { join, resolve, sep } from 'node:path';
import { encodeSegment } from './names.ts';

/**
 * Where everything lives under the data root:
 *
 *   ~tmp/                     uploads being received, and trash being removed
 *   <bucket>/~bucket.json     the bucket's settings
 *   <bucket>/<k1>/…/<kn>/     one directory per object key, holding
 *       ~object.json          the object's metadata, naming its current version
 *       ~data-<version>       that version's bytes
 *
 * A key is a directory rather than a file so that "a" and "a/b" can both exist.
 * Names starting with `~` are the store's own: bucket names cannot contain `~` and
 * key segments have it escaped.
 */
export class Layout {
  readonly rootDir: string;
  readonly tmpDir: string;

  constructor(rootDir: string) {
    this.rootDir = resolve(rootDir);
    this.tmpDir = join(this.rootDir, '~tmp');
  }

  /** The bucket id must already have passed assertBucketName. */
  bucketDir(bucketId: string): string {
    return this.inside(this.rootDir, join(this.rootDir, bucketId));
  }

  bucketFile(bucketId: string): string {
    return join(this.bucketDir(bucketId), '~bucket.json');
  }

  /** The key must already have passed assertObjectKey. */
  objectDir(bucketId: string, key: string): string {
    const bucketDir = this.bucketDir(bucketId);
    return this.inside(bucketDir, join(bucketDir, ...key.split('/').map(encodeSegment)));
  }

  objectFile(objectDir: string): string {
    return join(objectDir, '~object.json');
  }

  dataFile(objectDir: string, version: string): string {
    return join(objectDir, `~data-${version}`);
  }

  /** A fresh name in the staging area, on the same filesystem so rename() is atomic. */
  tmpPath(): string {
    return join(this.tmpDir, randomUUID());
  }

  // Names are validated before they get here; this guards against a validation gap ever
  // turning into a write outside the data root.
  private inside(parent: string, path: string): string {
    const resolved = resolve(path);
    if (!resolved.startsWith(parent + sep)) throw new Error(`storage path escapes its root: ${path}`);
    return resolved;
  }
}
