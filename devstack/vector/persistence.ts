import { existsSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { NamespaceStore } from './namespace.ts';
import type { IndexShape, Metadata, SparseVector, StoredVector } from './types.ts';

/**
 * On-disk layout under dataDir: `manifest.json` names, per namespace, one generation of files:
 * `<base>.ndjson` (one record per line, in insertion order), `<base>.f32` (the dense vectors of
 * those records, in the same order) and `<base>.usearch` (the HNSW graph). A flush writes new
 * generations under fresh names, then swaps the manifest in with a rename, so a crash leaves
 * either the old or the new state; files no manifest names are removed on start.
 */
interface Manifest {
  format: 1;
  shape: IndexShape;
  /** The model the dense vectors come from; absent in indexes made before it was recorded, or without one. */
  embeddingModel?: string;
  generation: number;
  namespaces: Record<string, { base: string; nextSeq: number; nextKey: number }>;
}

interface SavedRecord {
  id: string;
  seq: number;
  key: number;
  dense?: true;
  sparseVector?: SparseVector;
  metadata?: Metadata;
  data?: string;
}

export interface LoadedNamespace {
  records: StoredVector[];
  counters: { nextSeq: number; nextKey: number };
  graphPath: string;
}

const manifestName = 'manifest.json';
const ownFile = /^(ns-[0-9a-f]*-\d+\.(ndjson|f32|usearch)|manifest\.json\.tmp)$/;

export class VectorPersistence {
  private manifest: Manifest;

  private constructor(
    private readonly dir: string,
    manifest: Manifest,
  ) {
    this.manifest = manifest;
  }

  /**
   * Opens dataDir, refusing one written for an index of another shape or, when `embeddingModel` is given, with
   * another model's dense vectors (two models of one dimension make vectors that mean nothing to each other);
   * or, with `setAside`, moving it to `<dir>.<TYPE>-<dimension>` and beginning empty (what `npm run reindex` does).
   */
  static async open(dir: string, shape: IndexShape, setAside = false, embeddingModel?: string): Promise<VectorPersistence> {
    await mkdir(dir, { recursive: true });
    const path = join(dir, manifestName);
    let manifest: Manifest = { format: 1, shape, ...(embeddingModel ? { embeddingModel } : {}), generation: 0, namespaces: {} };
    if (existsSync(path)) {
      const found = await unreadable(dir, async () => JSON.parse(await readFile(path, 'utf8')) as Manifest);
      const saved = found.shape;
      const sameShape =
        saved.indexType === shape.indexType &&
        saved.dimension === shape.dimension &&
        saved.similarityFunction === shape.similarityFunction;
      const modelProblem = sameShape ? otherModel(found, embeddingModel) : undefined;
      if (sameShape && !modelProblem) {
        manifest = { ...found, ...(embeddingModel ? { embeddingModel } : {}) };
      } else if (setAside) {
        const aside = `${dir}.${saved.indexType}-${saved.dimension}-${Date.now()}`;
        await rename(dir, aside);
        await mkdir(dir, { recursive: true });
      } else if (modelProblem) {
        throw new Error(
          `${dir} holds ${modelProblem}, not of the configured ${embeddingModel}: the embedding model changed. ` +
            'Run `npm run reindex` to re-embed every document from its stored chunks into a new index (the old one ' +
            'is kept beside it), or start with the model it was made with (DEVSTACK_EMBEDDING_MODEL).',
        );
      } else {
        throw new Error(
          `${dir} holds a ${saved.indexType} index (dimension ${saved.dimension}, ${saved.similarityFunction}), ` +
            `not the configured ${shape.indexType} index (dimension ${shape.dimension}, ${shape.similarityFunction}): ` +
            'the embedding model changed. Run `npm run reindex` to re-embed every document from its stored chunks ' +
            'into a new index (the old one is kept beside it), or start with the settings it was made with.',
        );
      }
    }
    const persistence = new VectorPersistence(dir, manifest);
    await persistence.removeUnreferenced();
    return persistence;
  }

  load(): Promise<Map<string, LoadedNamespace>> {
    return unreadable(this.dir, () => this.read());
  }

  private async read(): Promise<Map<string, LoadedNamespace>> {
    const loaded = new Map<string, LoadedNamespace>();
    const dimension = this.manifest.shape.dimension;
    for (const [name, entry] of Object.entries(this.manifest.namespaces)) {
      const base = join(this.dir, entry.base);
      const lines = (await readFile(`${base}.ndjson`, 'utf8')).split('\n').filter((line) => line !== '');
      const saved = lines.map((line) => JSON.parse(line) as SavedRecord);
      const denseCount = saved.filter((record) => record.dense).length;
      const vectors = denseCount > 0 ? await readFloats(`${base}.f32`) : new Float32Array(0);
      if (vectors.length !== denseCount * dimension) {
        throw new Error(`${base}.f32 holds ${vectors.length} floats, expected ${denseCount * dimension}`);
      }
      let row = 0;
      const records = saved.map(({ dense, ...record }): StoredVector => {
        if (!dense) return record;
        const vector = vectors.slice(row * dimension, (row + 1) * dimension);
        row++;
        return { ...record, vector };
      });
      loaded.set(name, { records, counters: { nextSeq: entry.nextSeq, nextKey: entry.nextKey }, graphPath: `${base}.usearch` });
    }
    return loaded;
  }

  /**
   * Writes the given namespaces (absent ones are dropped from the manifest). Everything is
   * copied out synchronously first, so writes arriving during the I/O wait for the next save.
   */
  async save(namespaces: Map<string, NamespaceStore | undefined>): Promise<void> {
    const next: Manifest = structuredClone(this.manifest);
    const pending: Promise<void>[] = [];
    const superseded: string[] = [];
    for (const [name, store] of namespaces) {
      const previous = next.namespaces[name];
      if (previous) superseded.push(previous.base);
      if (!store) {
        delete next.namespaces[name];
        continue;
      }
      next.generation++;
      const base = `ns-${Buffer.from(name, 'utf8').toString('hex')}-${next.generation}`;
      const path = join(this.dir, base);
      const { ndjson, vectors } = serialize(store, this.manifest.shape.dimension);
      if (store.dense) {
        store.dense.save(`${path}.usearch`);
        pending.push(syncFile(`${path}.usearch`));
      }
      pending.push(writeDurably(`${path}.ndjson`, ndjson));
      if (vectors.length > 0) pending.push(writeDurably(`${path}.f32`, new Uint8Array(vectors.buffer)));
      next.namespaces[name] = { base, ...store.counters() };
    }
    await Promise.all(pending);
    const manifestPath = join(this.dir, manifestName);
    await writeDurably(`${manifestPath}.tmp`, JSON.stringify(next));
    await rename(`${manifestPath}.tmp`, manifestPath);
    this.manifest = next;
    await Promise.all(
      superseded.flatMap((base) =>
        ['ndjson', 'f32', 'usearch'].map((ext) => rm(join(this.dir, `${base}.${ext}`), { force: true })),
      ),
    );
  }

  private async removeUnreferenced(): Promise<void> {
    const referenced = new Set(Object.values(this.manifest.namespaces).map((entry) => entry.base));
    for (const file of await readdir(this.dir)) {
      if (!ownFile.test(file) || referenced.has(file.replace(/\.[a-z0-9]+$/, ''))) continue;
      await rm(join(this.dir, file), { force: true });
    }
  }
}

/**
 * Why an index of the right shape still cannot serve `configured`: it holds dense vectors of another model, or of
 * one it did not record (made before the devstack recorded it). Undefined: it can, and an empty one always can.
 */
function otherModel(found: Manifest, configured: string | undefined): string | undefined {
  if (!configured || found.shape.indexType === 'SPARSE' || found.embeddingModel === configured) return undefined;
  if (Object.keys(found.namespaces).length === 0) return undefined;
  if (found.embeddingModel) return `the vectors of the embedding model ${found.embeddingModel}`;
  return 'vectors of an embedding model it did not record (it was made before the devstack recorded one)';
}

/** Names the directory, and the way out, when saved state cannot be read back. */
async function unreadable<T>(dir: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`The vector data in ${dir} cannot be read (${reason}). Delete that directory to start empty.`);
  }
}

function serialize(store: NamespaceStore, dimension: number): { ndjson: string; vectors: Float32Array } {
  const records = [...store.all()];
  const denseCount = records.filter((record) => record.vector).length;
  const vectors = new Float32Array(denseCount * dimension);
  const lines: string[] = [];
  let row = 0;
  for (const { vector, ...record } of records) {
    const saved: SavedRecord = record;
    if (vector) {
      vectors.set(vector, row * dimension);
      row++;
      saved.dense = true;
    }
    lines.push(JSON.stringify(saved));
  }
  return { ndjson: lines.length > 0 ? `${lines.join('\n')}\n` : '', vectors };
}

async function readFloats(path: string): Promise<Float32Array> {
  const bytes = await readFile(path);
  // Copied so the floats are aligned whatever offset Node's buffer pool gave the bytes.
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}

/** Written and fsynced, so the manifest never names a file the disk has not kept. */
async function writeDurably(path: string, contents: string | Uint8Array): Promise<void> {
  const handle = await open(path, 'w');
  try {
    await handle.writeFile(contents);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function syncFile(path: string): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
