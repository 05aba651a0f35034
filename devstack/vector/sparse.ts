import type { SparseVector } from './types.ts';

export interface SparseMatch {
  key: number;
  score: number;
}

/**
 * Exact sparse search: posting lists from dimension to (vector key, value), scored by the
 * inner product over the dimensions the query and a vector share, as Upstash documents.
 */
export class SparseIndex {
  private readonly postings = new Map<number, Map<number, number>>();
  private vectorCount = 0;

  get size(): number {
    return this.vectorCount;
  }

  add(key: number, vector: SparseVector): void {
    for (let i = 0; i < vector.indices.length; i++) {
      const dimension = vector.indices[i]!;
      let list = this.postings.get(dimension);
      if (!list) {
        list = new Map();
        this.postings.set(dimension, list);
      }
      list.set(key, vector.values[i]!);
    }
    this.vectorCount++;
  }

  remove(key: number, vector: SparseVector): void {
    for (const dimension of vector.indices) {
      const list = this.postings.get(dimension);
      if (!list) continue;
      list.delete(key);
      if (list.size === 0) this.postings.delete(dimension);
    }
    this.vectorCount--;
  }

  clear(): void {
    this.postings.clear();
    this.vectorCount = 0;
  }

  /**
   * ln(((N - n + 0.5) / (n + 0.5)) + 1), with N the sparse vectors in the namespace and n those
   * with a non-zero value in the dimension: the SDK's documented formula, which stays positive.
   */
  idf(dimension: number): number {
    const n = this.postings.get(dimension)?.size ?? 0;
    return Math.log((this.vectorCount - n + 0.5) / (n + 0.5) + 1);
  }

  /** Every vector sharing a dimension with the query, scored; `accept` drops keys before ranking. */
  search(query: SparseVector, weighting: 'IDF' | undefined, accept?: (key: number) => boolean): SparseMatch[] {
    const scores = new Map<number, number>();
    for (let i = 0; i < query.indices.length; i++) {
      const dimension = query.indices[i]!;
      const list = this.postings.get(dimension);
      if (!list) continue;
      const weight = query.values[i]! * (weighting === 'IDF' ? this.idf(dimension) : 1);
      for (const [key, value] of list) scores.set(key, (scores.get(key) ?? 0) + weight * value);
    }
    const matches: SparseMatch[] = [];
    for (const [key, score] of scores) if (!accept || accept(key)) matches.push({ key, score });
    return matches.sort((a, b) => b.score - a.score || a.key - b.key);
  }
}
