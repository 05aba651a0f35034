import { describe, expect, it } from 'vitest';
import { convexFuse, distributionFuse, fusionName, parseFusion } from '#retrieval/fusion.ts';

const c = (id: string, score: number) => ({ id, score, metadata: {} });

describe('fusion', () => {
  it('reads RETRIEVAL_FUSION', () => {
    expect(parseFusion('rrf')).toEqual({ kind: 'rrf' });
    expect(parseFusion(' DBSF ')).toEqual({ kind: 'dbsf' });
    expect(parseFusion('convex:0.7')).toEqual({ kind: 'convex', alpha: 0.7 });
    expect(parseFusion('dense')).toEqual({ kind: 'dense' });
    expect(parseFusion('dbsf:0.4')).toEqual({ kind: 'dbsf', alpha: 0.4 });
    expect(fusionName({ kind: 'dbsf', alpha: 0.4 })).toBe('dbsf:0.4');
    expect(fusionName({ kind: 'dbsf' })).toBe('dbsf');
    for (const bad of ['convex', 'convex:', 'convex:1.5', 'convex:-0.1', 'rrf:2', 'dbsf:', 'dbsf:2', 'bm25', ''])
      expect(parseFusion(bad), bad).toBeNull();
  });

  it('mixes min–max normalised scores, alpha on the dense side, over the union of both lists', () => {
    const dense = [c('a', 0.9), c('b', 0.8), c('c', 0.7)];
    const sparse = [c('c', 12), c('d', 8), c('a', 4)];
    // Normalised: dense a 1, b 0.5, c 0; sparse c 1, d 0.5, a 0.
    const fused = convexFuse(dense, sparse, 0.75, 10);
    expect(fused.map((x) => x.id)).toEqual(['a', 'b', 'c', 'd']);
    for (const [i, score] of [0.75, 0.375, 0.25, 0.125].entries()) expect(fused[i]?.score).toBeCloseTo(score, 12);
    expect(convexFuse(dense, sparse, 0, 2).map((x) => x.id)).toEqual(['c', 'd']);
    expect(convexFuse(dense, [], 0.5, 10).map((x) => x.id)).toEqual(['a', 'b', 'c']);
  });

  it('scales each list between its mean ± 3 sd, as Upstash’s DBSF, then mixes them, alpha on the dense side', () => {
    // Dense: mean 0.8, sd √(0.02/3); sparse: mean 8, sd √(32/3).
    const dense = [c('a', 0.9), c('b', 0.8), c('c', 0.7)];
    const sparse = [c('c', 12), c('d', 8), c('a', 4)];
    const scaled = (score: number, mean: number, sd: number) => (score - (mean - 3 * sd)) / (6 * sd);
    const [dsd, ssd] = [Math.sqrt(0.02 / 3), Math.sqrt(32 / 3)];
    const expected = {
      a: 0.6 * scaled(0.9, 0.8, dsd) + 0.4 * scaled(4, 8, ssd),
      c: 0.6 * scaled(0.7, 0.8, dsd) + 0.4 * scaled(12, 8, ssd),
      b: 0.6 * scaled(0.8, 0.8, dsd),
      d: 0.4 * scaled(8, 8, ssd),
    };
    const fused = distributionFuse(dense, sparse, 0.6, 10);
    expect(fused.map((x) => x.id)).toEqual(['a', 'c', 'b', 'd']);
    for (const x of fused) expect(x.score).toBeCloseTo(expected[x.id as keyof typeof expected], 12);
    // All on the sparse side: its order alone.
    expect(distributionFuse(dense, sparse, 0, 2).map((x) => x.id)).toEqual(['c', 'd']);
  });
});
