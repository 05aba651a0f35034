import usearch, { type MetricKind } from 'usearch';
import type { HnswSettings, SimilarityFunction } from './types.ts';

export interface DenseMatch {
  key: number;
  score: number;
}

const metrics: Record<SimilarityFunction, MetricKind> = {
  COSINE: usearch.MetricKind.Cos,
  EUCLIDEAN: usearch.MetricKind.L2sq,
  DOT_PRODUCT: usearch.MetricKind.IP,
};

/**
 * Upstash reports every dense score in [0, 1], higher is closer: (1 + cos) / 2,
 * 1 / (1 + squared distance) and (1 + dot) / 2. usearch's cos and ip distances are 1 - cos and 1 - dot.
 */
export function scoreFromDistance(similarity: SimilarityFunction, distance: number): number {
  return similarity === 'EUCLIDEAN' ? 1 / (1 + distance) : 1 - distance / 2;
}

/** The same score computed exactly, for filtered searches over few candidates. */
export function exactScore(similarity: SimilarityFunction, a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  let squared = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    dot += x * y;
    normA += x * x;
    normB += y * y;
    squared += (x - y) * (x - y);
  }
  if (similarity === 'EUCLIDEAN') return 1 / (1 + squared);
  if (similarity === 'DOT_PRODUCT') return (1 + dot) / 2;
  // usearch, too, treats the angle to a zero vector as orthogonal.
  const denominator = Math.sqrt(normA * normB);
  return (1 + (denominator === 0 ? 0 : dot / denominator)) / 2;
}

/**
 * An HNSW graph (usearch) over one namespace's dense vectors, addressed by numeric keys.
 *
 * Removed keys are marked, not removed from the graph: usearch 2.25's `remove` never frees the slots of
 * its key table, so an index that keeps removing keys (documents ingested, cancelled, deleted again and
 * again) ends up looping for ever inside `remove` (seen in the tests: 12 rounds of adding and removing 32
 * vectors). Searches skip the marked keys, and the namespace rebuilds the graph from its live vectors once
 * they pile up (`needsRebuild`).
 */
export class DenseIndex {
  private index: InstanceType<typeof usearch.Index>;
  private readonly removed = new Set<number>();

  constructor(
    readonly dimension: number,
    readonly similarity: SimilarityFunction,
    private readonly hnsw: HnswSettings,
  ) {
    this.index = this.create();
  }

  /** Live vectors. */
  get size(): number {
    return this.index.size() - this.removed.size;
  }

  /** Removed keys take more of the graph than a rebuild would cost to be rid of them. */
  get needsRebuild(): boolean {
    return this.removed.size > Math.max(256, this.size);
  }

  /** `vectors` holds keys.length rows of `dimension` floats. */
  add(keys: number[], vectors: Float32Array): void {
    if (keys.length === 0) return;
    // Always every core (0): usearch sizes its per-thread contexts when it grows, and a batch
    // added with more threads than the last growth reserved fails at random with "Reserve
    // capacity ahead of insertions!" (seen after a one-thread single-vector add).
    this.index.add(BigUint64Array.from(keys, BigInt), vectors, 0);
  }

  /** Keys are never added again (the namespace's counter), so a marked key stays dead until a rebuild. */
  remove(keys: number[]): void {
    for (const key of keys) this.removed.add(key);
  }

  contains(keys: number[]): boolean {
    if (keys.length === 0) return true;
    if (keys.some((key) => this.removed.has(key))) return false;
    const found = this.index.contains(BigUint64Array.from(keys, BigInt));
    return Array.isArray(found) ? found.every(Boolean) : found;
  }

  search(vector: Float32Array, k: number): DenseMatch[] {
    if (this.size === 0 || k <= 0) return [];
    // Deep enough that k live keys remain when every marked one is among the nearest.
    const matches = this.index.search(vector, Math.min(k + this.removed.size, this.index.size()), 1);
    const results: DenseMatch[] = [];
    for (let i = 0; i < matches.keys.length && results.length < k; i++) {
      const key = Number(matches.keys[i]);
      if (!this.removed.has(key)) results.push({ key, score: scoreFromDistance(this.similarity, matches.distances[i]!) });
    }
    return results;
  }

  clear(): void {
    this.index = this.create();
    this.removed.clear();
  }

  save(path: string): void {
    this.index.save(path);
  }

  load(path: string): void {
    const loaded = this.create();
    loaded.load(path);
    if (loaded.dimensions() !== this.dimension) throw new Error(`${path} holds ${loaded.dimensions()}-dimensional vectors`);
    this.index = loaded;
    this.removed.clear();
  }

  private create(): InstanceType<typeof usearch.Index> {
    return new usearch.Index({
      dimensions: this.dimension,
      metric: metrics[this.similarity],
      quantization: usearch.ScalarKind.F32,
      connectivity: this.hnsw.connectivity,
      expansion_add: this.hnsw.expansionAdd,
      expansion_search: this.hnsw.expansionSearch,
      multi: false,
    });
  }
}
