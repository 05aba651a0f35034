import { describe, expect, it } from 'vitest';
import { denseCutoffFor } from '#retrieval/dense-cutoff.ts';
import { applyStrategy, type Candidate, DEFAULT_SCORE_THRESHOLD } from '#retrieval/strategies.ts';

const candidate = (id: string, score: number): Candidate => ({ id, score, metadata: {} });

describe('denseCutoffFor', () => {
  it("takes BGE v1.5's own cut-off, by name wherever it is served, and the general one for other models", () => {
    for (const model of ['bge-small-en-v1.5', '@cf/baai/bge-small-en-v1.5', 'BAAI/bge-base-en-v1.5', 'Xenova/bge-small-en-v1.5'])
      expect(denseCutoffFor(model), model).toBe(0.82);
    for (const model of [undefined, 'all-MiniLM-L6-v2', 'text-embedding-3-small', 'BAAI/bge-m3'])
      expect(denseCutoffFor(model), String(model)).toBe(DEFAULT_SCORE_THRESHOLD.dense);
  });
});

describe("the threshold strategy's default with a model's dense cut-off", () => {
  // Scores as bge-small gives them (Upstash's (1 + cos) / 2): a relevant passage, and unrelated ones of the same field.
  const pool = [candidate('relevant', 0.88), candidate('same-field', 0.79), candidate('other-field', 0.7)];

  it("dense: the model's cut-off, not the general 0.65 that everything here passes", () => {
    const threshold = { kind: 'threshold', minScore: null } as const;
    expect(applyStrategy(pool, threshold, 5, 'dense').map((c) => c.id)).toEqual(['relevant', 'same-field', 'other-field']);
    const withCutoff = { ...threshold, denseCutoff: 0.82 };
    expect(applyStrategy(pool, withCutoff, 5, 'dense').map((c) => c.id)).toEqual(['relevant']);
    // A collection's own minScore still wins.
    expect(applyStrategy(pool, { ...withCutoff, minScore: 0.75 }, 5, 'dense').map((c) => c.id)).toEqual([
      'relevant',
      'same-field',
    ]);
  });

  it('fused: the dense list is judged by the same cut-off, the sparse list by its own', () => {
    const fusedPool = pool.map((c, i) => candidate(c.id, 1 - i / 10));
    const evidence = { dense: pool, sparse: [candidate('other-field', 1.2), candidate('same-field', 0.4)] };
    const kept = applyStrategy(fusedPool, { kind: 'threshold', minScore: null, denseCutoff: 0.82 }, 5, 'dbsf', { evidence });
    expect(kept.map((c) => c.id)).toEqual(['relevant', 'other-field']);
  });

  it('sparse: untouched by the dense cut-off', () => {
    const sparse = [candidate('a', 1.5), candidate('b', 0.9)];
    const kept = applyStrategy(sparse, { kind: 'threshold', minScore: null, denseCutoff: 0.82 }, 5, 'sparse');
    expect(kept.map((c) => c.id)).toEqual(['a']);
  });
});
