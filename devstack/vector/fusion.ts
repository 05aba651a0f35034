import type { FusionAlgorithm } from './types.ts';

export interface Ranked {
  key: number;
  score: number;
}

/** Reciprocal rank fusion's constant, fixed at 60 by Upstash. */
const rrfK = 60;

/**
 * Merges a hybrid query's dense and sparse results, each sorted best first, as Upstash
 * documents: every score is mapped (RRF: 1 / (rank + 60), rank from 1; DBSF: scaled between
 * mean - 3 sd and mean + 3 sd of its own list), a vector found by both gets the sum, and the
 * best topK remain.
 */
export function fuse(dense: Ranked[], sparse: Ranked[], algorithm: FusionAlgorithm, topK: number): Ranked[] {
  const fused = new Map<number, number>();
  for (const list of [dense, sparse]) {
    const mapped = algorithm === 'RRF' ? reciprocalRanks(list) : distributionScaled(list);
    for (const { key, score } of mapped) fused.set(key, (fused.get(key) ?? 0) + score);
  }
  return [...fused]
    .map(([key, score]) => ({ key, score }))
    .sort((a, b) => b.score - a.score || a.key - b.key)
    .slice(0, topK);
}

function reciprocalRanks(list: Ranked[]): Ranked[] {
  return list.map(({ key }, index) => ({ key, score: 1 / (index + 1 + rrfK) }));
}

function distributionScaled(list: Ranked[]): Ranked[] {
  if (list.length === 0) return [];
  const mean = list.reduce((sum, { score }) => sum + score, 0) / list.length;
  const deviation = Math.sqrt(list.reduce((sum, { score }) => sum + (score - mean) ** 2, 0) / list.length);
  // With no spread every score sits at the mean, which the formula maps to 0.5 in the limit.
  if (deviation === 0) return list.map(({ key }) => ({ key, score: 0.5 }));
  const low = mean - 3 * deviation;
  return list.map(({ key, score }) => ({ key, score: (score - low) / (6 * deviation) }));
}
