import type { SparseVector } from './sparse.ts';

/** Cosine similarity of two dense vectors, in [-1, 1]; 0 when either has no length. */
export function denseCosine(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length) throw new RangeError(`Cannot compare vectors of ${a.length} and ${b.length} dimensions`);
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    dot += x * y;
    normA += x * x;
    normB += y * y;
  }
  return normA === 0 || normB === 0 ? 0 : clampCosine(dot / Math.sqrt(normA * normB));
}

/** A sparse vector prepared for repeated comparison: one weight per dimension, and its norm. */
export interface SparseTerms {
  weights: ReadonlyMap<number, number>;
  norm: number;
}

/** Duplicate indices are summed, so a vector in any order compares the same as its canonical form. */
export function toSparseTerms(vector: SparseVector): SparseTerms {
  if (vector.indices.length !== vector.values.length) {
    throw new RangeError(`Sparse vector has ${vector.indices.length} indices but ${vector.values.length} values`);
  }
  const weights = new Map<number, number>();
  vector.indices.forEach((index, i) => {
    weights.set(index, (weights.get(index) ?? 0) + (vector.values[i] as number));
  });
  return { weights, norm: Math.sqrt([...weights.values()].reduce((sum, w) => sum + w * w, 0)) };
}

/** Counts of each term, for comparing texts as bags of words. */
export function termCounts(tokens: readonly string[]): SparseTermsByString {
  const weights = new Map<string, number>();
  for (const token of tokens) weights.set(token, (weights.get(token) ?? 0) + 1);
  return { weights, norm: Math.sqrt([...weights.values()].reduce((sum, w) => sum + w * w, 0)) };
}

export interface SparseTermsByString {
  weights: ReadonlyMap<string, number>;
  norm: number;
}

/** Cosine similarity of two sparse vectors; 0 when either is empty. */
export function sparseCosine<K>(
  a: { weights: ReadonlyMap<K, number>; norm: number },
  b: { weights: ReadonlyMap<K, number>; norm: number },
): number {
  if (a.norm === 0 || b.norm === 0) return 0;
  const [small, large] = a.weights.size <= b.weights.size ? [a, b] : [b, a];
  let dot = 0;
  for (const [key, weight] of small.weights) dot += weight * (large.weights.get(key) ?? 0);
  return clampCosine(dot / (a.norm * b.norm));
}

// Rounding can push a self-similarity a hair past 1.
function clampCosine(value: number): number {
  return Math.min(1, Math.max(-1, value));
}
