import { describe, expect, it } from 'vitest';
import { fuseAcross, reciprocalRankFuse } from '#retrieval/across-namespaces.ts';
import type { Candidate } from '#retrieval/strategies.ts';

const c = (id: string, score: number): Candidate => ({ id, score, metadata: { text: id } });
const ids = (list: readonly Candidate[]) => list.map((candidate) => candidate.id);

describe('fuseAcross', () => {
  it('merges sparse lists by score, telling each namespace’s candidates apart', () => {
    const { found, mode, evidence } = fuseAcross(
      [
        { namespace: 'a', sparse: [c('x', 3), c('y', 1)] },
        { namespace: 'b', sparse: [c('x', 2), c('z', 0.5)] },
      ],
      { kind: 'rrf' },
      3,
    );
    expect(mode).toBe('sparse');
    expect(evidence).toBeUndefined();
    // The same vector id in two namespaces (a document's copy) stays two candidates.
    expect(ids(found)).toEqual(['a/x', 'b/x', 'a/y']);
    expect(found.map((f) => f.namespace)).toEqual(['a', 'b', 'a']);
  });

  it('fuses once over the merged lists: one namespace’s weak best does not tie with another’s strong best', () => {
    const lists = [
      // A strong match in both lists.
      { namespace: 'a', dense: [c('p', 0.9), c('q', 0.6)], sparse: [c('p', 9), c('q', 2)] },
      // Its best is weak in both.
      { namespace: 'b', dense: [c('r', 0.55)], sparse: [c('r', 0.4)] },
    ];
    const { found, mode, evidence } = fuseAcross(lists, { kind: 'rrf' }, 10);
    expect(mode).toBe('hybrid');
    expect(ids(found)).toEqual(['a/p', 'a/q', 'b/r']);
    expect(found[0]?.score).toBeCloseTo(2 / 61);
    expect(found[2]?.score).toBeCloseTo(2 / 63);
    expect(ids(evidence?.dense ?? [])).toEqual(['a/p', 'a/q', 'b/r']);
    // Fused within each namespace first, p and r would both score 2 / 61.
  });

  it('keeps the fusion the deployment chose: convex and weighted DBSF mix, plain DBSF keeps its mode', () => {
    const lists = [
      { namespace: 'a', dense: [c('p', 0.9)], sparse: [c('q', 5)] },
      { namespace: 'b', dense: [c('r', 0.7)], sparse: [c('r', 1)] },
    ];
    const convex = fuseAcross(lists, { kind: 'convex', alpha: 1 }, 10);
    expect(convex.mode).toBe('convex');
    expect(ids(convex.found)[0]).toBe('a/p');
    const sparseOnly = fuseAcross(lists, { kind: 'convex', alpha: 0 }, 10);
    expect(ids(sparseOnly.found)[0]).toBe('a/q');
    expect(fuseAcross(lists, { kind: 'dbsf' }, 10).mode).toBe('dbsf');
    expect(fuseAcross(lists, { kind: 'dbsf', alpha: 0.3 }, 10).mode).toBe('convex');
  });

  it('uses the dense lists alone when the deployment searches densely', () => {
    const { found, mode } = fuseAcross(
      [
        { namespace: 'a', dense: [c('p', 0.6)] },
        { namespace: 'b', dense: [c('q', 0.8)] },
      ],
      { kind: 'dense' },
      1,
    );
    expect(mode).toBe('dense');
    expect(ids(found)).toEqual(['b/q']);
  });
});

describe('reciprocalRankFuse', () => {
  it('scores 1 / (60 + rank) summed over the lists, as Upstash does, ties by id', () => {
    const fused = reciprocalRankFuse([c('a', 0.9), c('b', 0.8)], [c('b', 3), c('a', 2), c('c', 1)], 10);
    expect(ids(fused)).toEqual(['a', 'b', 'c']);
    expect(fused[0]?.score).toBeCloseTo(1 / 61 + 1 / 62);
    expect(fused[2]?.score).toBeCloseTo(1 / 63);
    expect(reciprocalRankFuse([c('a', 1)], [c('b', 1)], 1)).toHaveLength(1);
  });
});
