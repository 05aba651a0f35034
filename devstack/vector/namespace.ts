import { DenseIndex, exactScore } from './dense.ts';
import type { MetadataPredicate } from './filter.ts';
import { fuse, type Ranked } from './fusion.ts';
import type { UpdateRequest } from './payloads.ts';
import { SparseIndex } from './sparse.ts';
import type { HnswSettings, IndexShape, Metadata, Scored, StoredVector, VectorQuery, VectorWrite } from './types.ts';

/**
 * A filtered dense query scans the matching vectors exactly when they are few, absolutely or
 * relative to the namespace: the graph would have to be searched very deep to find them.
 */
const exactScanLimit = 4096;
const exactScanFraction = 0.1;

export interface RangePage {
  nextCursor: string;
  records: StoredVector[];
}

/** One namespace: its vectors by id, and the dense graph and sparse postings that search them. */
export class NamespaceStore {
  /** Map order is insertion order, which is `seq` order: range pages walk it. */
  private readonly records = new Map<string, StoredVector>();
  private readonly byKey = new Map<number, StoredVector>();
  readonly dense?: DenseIndex;
  private readonly sparse?: SparseIndex;
  private nextSeq = 0;
  private nextKey = 1;

  constructor(
    private readonly shape: IndexShape,
    hnsw: HnswSettings,
  ) {
    if (shape.indexType !== 'SPARSE') this.dense = new DenseIndex(shape.dimension, shape.similarityFunction, hnsw);
    if (shape.indexType !== 'DENSE') this.sparse = new SparseIndex();
  }

  get size(): number {
    return this.records.size;
  }

  /** Approximate bytes held: vectors, postings, metadata and data. */
  get byteSize(): number {
    let bytes = 0;
    for (const record of this.records.values()) {
      bytes += record.id.length + (record.vector?.byteLength ?? 0) + (record.sparseVector?.indices.length ?? 0) * 8;
      if (record.metadata) bytes += JSON.stringify(record.metadata).length;
      bytes += record.data?.length ?? 0;
    }
    return bytes;
  }

  upsert(writes: VectorWrite[]): void {
    // Within one request the last write of an id wins.
    const latest = new Map<string, VectorWrite>();
    for (const write of writes) {
      latest.delete(write.id);
      latest.set(write.id, write);
    }
    const replaced: StoredVector[] = [];
    const added: StoredVector[] = [];
    for (const write of latest.values()) {
      const existing = this.records.get(write.id);
      if (existing) replaced.push(existing);
      added.push({ ...write, seq: existing?.seq ?? this.nextSeq++, key: this.nextKey++ });
    }
    this.detach(replaced);
    for (const record of added) this.records.set(record.id, record);
    this.attach(added);
  }

  /** Returns whether the id existed. */
  update(request: UpdateRequest): boolean {
    const existing = this.records.get(request.id);
    if (!existing) return false;
    const metadata =
      request.metadata === undefined
        ? existing.metadata
        : request.metadataUpdateMode === 'PATCH'
          ? (mergePatch(existing.metadata, request.metadata) as Metadata)
          : request.metadata;
    const next: StoredVector = {
      ...existing,
      metadata,
      data: request.data ?? existing.data,
      vector: request.vector ?? existing.vector,
      sparseVector: request.sparseVector ?? existing.sparseVector,
    };
    if (request.vector || request.sparseVector) {
      this.detach([existing]);
      next.key = this.nextKey++;
      this.records.set(next.id, next);
      this.attach([next]);
    } else {
      this.records.set(next.id, next);
      this.byKey.set(next.key, next);
    }
    return true;
  }

  delete(ids: Iterable<string>): number {
    const doomed: StoredVector[] = [];
    for (const id of new Set(ids)) {
      const record = this.records.get(id);
      if (record) doomed.push(record);
    }
    this.detach(doomed);
    for (const record of doomed) this.records.delete(record.id);
    return doomed.length;
  }

  deleteWhere(matches: (record: StoredVector) => boolean): number {
    return this.delete([...this.records.values()].filter(matches).map((record) => record.id));
  }

  clear(): void {
    this.records.clear();
    this.byKey.clear();
    this.dense?.clear();
    this.sparse?.clear();
  }

  get(id: string): StoredVector | undefined {
    return this.records.get(id);
  }

  withPrefix(prefix: string): StoredVector[] {
    return [...this.records.values()].filter((record) => record.id.startsWith(prefix));
  }

  all(): IterableIterator<StoredVector> {
    return this.records.values();
  }

  /** Vectors from `cursor` (a seq, inclusive) on, in insertion order; the next cursor is "" at the end. */
  range(cursor: number, limit: number, prefix: string | undefined): RangePage {
    const page: StoredVector[] = [];
    for (const record of this.records.values()) {
      if (record.seq < cursor || (prefix !== undefined && !record.id.startsWith(prefix))) continue;
      if (page.length === limit) return { nextCursor: String(record.seq), records: page };
      page.push(record);
    }
    return { nextCursor: '', records: page };
  }

  query(query: VectorQuery): Scored[] {
    const useDense = query.vector !== undefined && this.dense !== undefined && query.queryMode !== 'SPARSE';
    const useSparse = query.sparseVector !== undefined && this.sparse !== undefined && query.queryMode !== 'DENSE';
    const dense = useDense ? this.denseSearch(query.vector!, query.topK, query.filter) : [];
    const sparse = useSparse ? this.sparseSearch(query, query.filter) : [];
    const ranked = useDense && useSparse ? fuse(dense, sparse, query.fusionAlgorithm, query.topK) : useDense ? dense : sparse;
    const results: Scored[] = [];
    for (const { key, score } of ranked) {
      const record = this.byKey.get(key);
      if (record) results.push({ record, score });
    }
    return results;
  }

  /** Persistence: the next counters, so reloaded keys and cursors never collide with new ones. */
  counters(): { nextSeq: number; nextKey: number } {
    return { nextSeq: this.nextSeq, nextKey: this.nextKey };
  }

  /**
   * Rebuilds the namespace from saved records. `loadGraph` may fill the dense graph from its
   * saved file; when it cannot, or the file does not hold exactly these vectors, it is rebuilt.
   */
  restore(records: StoredVector[], counters: { nextSeq: number; nextKey: number }, loadGraph: (dense: DenseIndex) => boolean) {
    this.clear();
    for (const record of records) {
      this.records.set(record.id, record);
      this.byKey.set(record.key, record);
      if (record.sparseVector) this.sparse?.add(record.key, record.sparseVector);
    }
    this.nextSeq = counters.nextSeq;
    this.nextKey = counters.nextKey;
    const withVectors = records.filter((record) => record.vector);
    if (!this.dense) return;
    let loaded = false;
    try {
      loaded = loadGraph(this.dense);
    } catch {
      loaded = false;
    }
    const keys = withVectors.map((record) => record.key);
    if (loaded && this.dense.size === keys.length && this.dense.contains(keys)) return;
    this.rebuildDense();
  }

  private attach(records: StoredVector[]): void {
    for (const record of records) {
      this.byKey.set(record.key, record);
      if (record.sparseVector) this.sparse?.add(record.key, record.sparseVector);
    }
    this.addDense(records.filter((record) => record.vector));
  }

  /** The graph again from the live vectors, without the removed ones it still holds (dense.ts says why). */
  private rebuildDense(): void {
    this.dense?.clear();
    const live = [...this.records.values()].filter((record) => record.vector);
    for (let start = 0; start < live.length; start += 10_000) this.addDense(live.slice(start, start + 10_000));
  }

  private addDense(records: StoredVector[]): void {
    if (!this.dense || records.length === 0) return;
    const rows = new Float32Array(records.length * this.shape.dimension);
    for (const [i, record] of records.entries()) rows.set(record.vector!, i * this.shape.dimension);
    this.dense.add(
      records.map((record) => record.key),
      rows,
    );
  }

  private detach(records: StoredVector[]): void {
    for (const record of records) {
      this.byKey.delete(record.key);
      if (record.sparseVector) this.sparse?.remove(record.key, record.sparseVector);
    }
    this.dense?.remove(records.filter((record) => record.vector).map((record) => record.key));
  }

  private denseSearch(vector: Float32Array, topK: number, filter: MetadataPredicate | undefined): Ranked[] {
    const dense = this.dense!;
    if (dense.needsRebuild) this.rebuildDense();
    if (!filter) {
      // The graph may not reach every node when asked for nearly all of them (a small namespace, or one
      // whose removed vectors still sit in it): then they are few enough to score exactly.
      const found = dense.search(vector, topK);
      if (found.length >= Math.min(topK, dense.size)) return found;
    }
    const candidates: StoredVector[] = [];
    for (const record of this.records.values())
      if (record.vector && (!filter || filter(record.metadata))) candidates.push(record);
    const total = dense.size;
    if (candidates.length === 0) return [];
    if (filter && candidates.length > exactScanLimit && candidates.length >= total * exactScanFraction) {
      // Search deeper than topK, in proportion to how many vectors the filter rejects.
      const accepted = new Set(candidates.map((record) => record.key));
      let k = Math.min(total, Math.ceil(((topK * total) / candidates.length) * 2));
      for (;;) {
        const found = dense.search(vector, k).filter((match) => accepted.has(match.key));
        if (found.length >= topK) return found.slice(0, topK);
        // Searching the whole graph would cost more than scoring the candidates exactly.
        if (k * 2 >= total) break;
        k *= 2;
      }
    }
    return candidates
      .map((record) => ({ key: record.key, score: exactScore(this.shape.similarityFunction, vector, record.vector!) }))
      .sort((a, b) => b.score - a.score || a.key - b.key)
      .slice(0, topK);
  }

  private sparseSearch(query: VectorQuery, filter: MetadataPredicate | undefined): Ranked[] {
    const accept = filter ? (key: number) => filter(this.byKey.get(key)?.metadata) : undefined;
    return this.sparse!.search(query.sparseVector!, query.weightingStrategy, accept).slice(0, query.topK);
  }
}

/** RFC 7396 JSON Merge Patch, which Upstash applies for metadataUpdateMode PATCH. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const result: Record<string, unknown> =
    typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [field, value] of Object.entries(patch)) {
    if (value === null) delete result[field];
    else result[field] = mergePatch(result[field], value);
  }
  return result;
}
