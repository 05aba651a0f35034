import { createHash, type Hash } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { type FileHandle, mkdir, open, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { entityTooLarge } from './errors.ts';

/** A received body, complete and flushed, waiting under the staging area to be renamed into place. */
export interface StagedFile {
  path: string;
  size: number;
  /** Quoted MD5 of the bytes, as S3 and Storage give it. */
  eTag: string;
}

/**
 * Writes a body to a staging file as it arrives, hashing it on the way, so uploads of
 * any size take constant memory. Past maxBytes it stops writing but keeps counting,
 * and finish() reports the object as too large.
 */
export class StagingFile {
  #size = 0;
  #tooLarge = false;
  #closed = false;
  readonly #hash: Hash = createHash('md5');

  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
    private readonly maxBytes: number,
  ) {}

  static async create(path: string, maxBytes: number): Promise<StagingFile> {
    await mkdir(dirname(path), { recursive: true });
    return new StagingFile(path, await open(path, 'wx'), maxBytes);
  }

  async write(chunk: Uint8Array): Promise<void> {
    this.#size += chunk.byteLength;
    if (this.#size > this.maxBytes) this.#tooLarge = true;
    if (this.#tooLarge || chunk.byteLength === 0) return;
    this.#hash.update(chunk);
    await this.handle.write(chunk);
  }

  async finish(): Promise<StagedFile> {
    if (this.#tooLarge) {
      await this.discard();
      throw entityTooLarge();
    }
    await this.handle.sync();
    await this.close();
    return { path: this.path, size: this.#size, eTag: `"${this.#hash.digest('hex')}"` };
  }

  /** Safe to call at any point, and more than once. */
  async discard(): Promise<void> {
    await this.close();
    await rm(this.path, { force: true });
  }

  private async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.handle.close();
  }
}

/**
 * Creates the staging area, clearing what a crash left there. Only entries untouched for
 * an hour go, so an upload still arriving in another process sharing the root survives.
 */
export function prepareStagingArea(tmpDir: string, maxAgeMs = 60 * 60 * 1000): void {
  mkdirSync(tmpDir, { recursive: true });
  const cutoff = Date.now() - maxAgeMs;
  for (const name of readdirSync(tmpDir)) {
    const path = join(tmpDir, name);
    try {
      if (statSync(path).mtimeMs < cutoff) rmSync(path, { recursive: true, force: true });
    } catch {
      // Gone already, or not ours to remove: either way nothing to clean.
    }
  }
}
