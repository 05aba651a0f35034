import { describe, expect, it } from 'vitest';
import { encodeDocument } from '#retrieval/sparse.ts';
import {
  applyStrategy,
  type Candidate,
  candidatePoolSize,
  DEFAULT_MMR_LAMBDA,
  MAX_MMR_POOL,
  type QueryMode,
  type Strategy,
} from '#retrieval/strategies.ts';
import { seededRandom } from '../support/seeded-random.ts';

const DIMENSIONS = 32;

function randomUnit(random: () => number): number[] {
  const v = Array.from({ length: DIMENSIONS }, () => random() * 2 - 1);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

/** A random unit vector orthogonal to the given ones (Gram–Schmidt), so its cosine with each is 0. */
function orthogonalTo(others: number[][], random: () => number): number[] {
  let v = randomUnit(random);
  for (const other of others) {
    const dot = v.reduce((sum, x, i) => sum + x * (other[i] as number), 0);
    v = v.map((x, i) => x - dot * (other[i] as number));
  }
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

function nearCopy(base: number[], random: () => number, noise: number): number[] {
  return base.map((x) => x + (random() * 2 - 1) * noise);
}

const ids = (candidates: Candidate[]) => candidates.map((candidate) => candidate.id);
const similarity: Strategy = { kind: 'similarity' };
const mmr = (lambda: number): Strategy => ({ kind: 'mmr', lambda });
const threshold = (minScore: number | null): Strategy => ({ kind: 'threshold', minScore });

/**
 * Three near-duplicates of one passage at the top (as when a document repeats a paragraph),
 * then distinct passages with slightly lower scores.
 */
function duplicatePool(seed = 7): Candidate[] {
  const random = seededRandom(seed);
  const a = randomUnit(random);
  const b = orthogonalTo([a], random);
  const c = orthogonalTo([a, b], random);
  const pool: Array<[string, number, number[]]> = [
    ['a', 0.95, a],
    ['a-copy-1', 0.94, nearCopy(a, random, 0.02)],
    ['a-copy-2', 0.93, nearCopy(a, random, 0.02)],
    ['b', 0.9, b],
    ['c', 0.88, c],
    ['d', 0.7, randomUnit(random)],
    ['e', 0.66, randomUnit(random)],
  ];
  return pool.map(([id, score, vector]) => ({ id, score, vector, metadata: { text: id } }));
}

function shuffled<T>(items: readonly T[], seed: number): T[] {
  const random = seededRandom(seed);
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

describe('the three strategies on one pool', () => {
  const pool = duplicatePool();

  it('similarity keeps the near-duplicates, MMR replaces them, threshold stops short of k', () => {
    const bySimilarity = applyStrategy(pool, similarity, 3, 'dense');
    const byMmr = applyStrategy(pool, mmr(DEFAULT_MMR_LAMBDA), 3, 'dense');
    const byThreshold = applyStrategy(pool, threshold(0.935), 3, 'dense');

    expect(ids(bySimilarity)).toEqual(['a', 'a-copy-1', 'a-copy-2']);
    expect(ids(byMmr)).toEqual(['a', 'b', 'c']);
    expect(ids(byThreshold)).toEqual(['a', 'a-copy-1']);
  });

  it('threshold returns nothing when no score reaches it', () => {
    expect(applyStrategy(pool, threshold(0.96), 3, 'dense')).toEqual([]);
  });

  it('threshold keeps at most k, best first, and includes a score equal to the cut', () => {
    expect(ids(applyStrategy(pool, threshold(0.88), 10, 'dense'))).toEqual(['a', 'a-copy-1', 'a-copy-2', 'b', 'c']);
    expect(ids(applyStrategy(pool, threshold(0.5), 2, 'dense'))).toEqual(['a', 'a-copy-1']);
  });

  it('returns scores as the index gave them, also after MMR', () => {
    const byMmr = applyStrategy(pool, mmr(0.5), 3, 'dense');
    expect(byMmr.map((candidate) => candidate.score)).toEqual([0.95, 0.9, 0.88]);
    expect(byMmr[1]).toBe(pool[3]);
  });
});

describe('similarity', () => {
  it('orders by score, ties by id, whatever the input order', () => {
    const pool: Candidate[] = [
      { id: 'b', score: 0.8, metadata: {} },
      { id: 'c', score: 0.9, metadata: {} },
      { id: 'a', score: 0.8, metadata: {} },
      { id: 'A', score: 0.8, metadata: {} },
    ];
    expect(ids(applyStrategy(pool, similarity, 4, 'dense'))).toEqual(['c', 'A', 'a', 'b']);
    expect(ids(applyStrategy(pool, similarity, 2, 'dense'))).toEqual(['c', 'A']);
  });

  it('returns fewer than k when the pool is smaller, and nothing for k = 0', () => {
    const pool = duplicatePool();
    expect(applyStrategy(pool, similarity, 50, 'dense')).toHaveLength(pool.length);
    expect(applyStrategy(pool, similarity, 0, 'dense')).toEqual([]);
    expect(applyStrategy([], mmr(0.5), 5, 'dense')).toEqual([]);
  });
});

describe('maximal marginal relevance', () => {
  // cos(a, b) ≈ 0.995, cos(a, c) = 0, cos(b, c) ≈ 0.0995; relevance scales to a 1, b 0.75, c 0.
  const pool: Candidate[] = [
    { id: 'a', score: 0.9, vector: [1, 0], metadata: {} },
    { id: 'b', score: 0.8, vector: [1, 0.1], metadata: {} },
    { id: 'c', score: 0.5, vector: [0, 1], metadata: {} },
  ];

  it('follows λ·relevance − (1 − λ)·redundancy step by step', () => {
    // λ = 0.5, step 2: b scores 0.5·0.75 − 0.5·0.995 < 0, c scores 0.5·0 − 0.5·0 = 0.
    expect(ids(applyStrategy(pool, mmr(0.5), 3, 'dense'))).toEqual(['a', 'c', 'b']);
    // λ = 0.8, step 2: b scores 0.8·0.75 − 0.2·0.995 ≈ 0.40 > c's 0.
    expect(ids(applyStrategy(pool, mmr(0.8), 3, 'dense'))).toEqual(['a', 'b', 'c']);
  });

  it('with λ = 0 picks the least similar passage after the most relevant one', () => {
    expect(ids(applyStrategy(pool, mmr(0), 2, 'dense'))).toEqual(['a', 'c']);
  });

  it('with λ = 1 is exactly similarity, ties included', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const random = seededRandom(seed);
      // Scores rounded to one decimal, so that many tie and the tie-break is exercised.
      const candidates: Candidate[] = Array.from({ length: 40 }, (_, i) => ({
        id: `chunk-${(i * 7919) % 40}`,
        score: Math.round(random() * 10) / 10,
        vector: randomUnit(random),
        metadata: {},
      }));
      for (const k of [1, 5, 40]) {
        expect(ids(applyStrategy(candidates, mmr(1), k, 'dense'))).toEqual(
          ids(applyStrategy(candidates, similarity, k, 'dense')),
        );
      }
    }
  });

  it('is deterministic: same result for any input order and on every call', () => {
    const pool = duplicatePool(11);
    const expected = ids(applyStrategy(pool, mmr(0.5), 4, 'dense'));
    for (const seed of [1, 2, 3]) expect(ids(applyStrategy(shuffled(pool, seed), mmr(0.5), 4, 'dense'))).toEqual(expected);
    expect(ids(applyStrategy(pool, mmr(0.5), 4, 'dense'))).toEqual(expected);
  });

  it('treats every candidate as equally relevant when all scores are equal', () => {
    const flat = duplicatePool().map((candidate) => ({ ...candidate, score: 0.5 }));
    const chosen = ids(applyStrategy(flat, mmr(0.5), 3, 'dense'));
    // First the smallest id, then no second copy of "a" while distinct passages remain.
    expect(chosen[0]).toBe('a');
    expect(chosen.filter((id) => id.startsWith('a'))).toHaveLength(1);
  });

  const passages = {
    fusion: 'Reciprocal rank fusion merges the dense and the sparse result lists by summing inverse ranks.',
    fusionAgain: 'Reciprocal rank fusion merges the dense and sparse result lists by summing their inverse ranks.',
    bm25: 'BM25 saturates term frequency and normalises by document length before weighting by IDF.',
    chunking: 'Documents are split into chunks of about a thousand characters on paragraph boundaries.',
  };

  it('diversifies on sparse vectors when the pool has no dense ones', () => {
    const pool: Candidate[] = [
      { id: 'fusion', score: 9.1, sparseVector: encodeDocument(passages.fusion), metadata: {} },
      { id: 'fusion-again', score: 9.0, sparseVector: encodeDocument(passages.fusionAgain), metadata: {} },
      { id: 'bm25', score: 6.2, sparseVector: encodeDocument(passages.bm25), metadata: {} },
      { id: 'chunking', score: 2.5, sparseVector: encodeDocument(passages.chunking), metadata: {} },
    ];
    expect(ids(applyStrategy(pool, similarity, 2, 'sparse'))).toEqual(['fusion', 'fusion-again']);
    expect(ids(applyStrategy(pool, mmr(0.5), 2, 'sparse'))).toEqual(['fusion', 'bm25']);
    // Indices out of order or repeated describe the same vector.
    const reordered = pool.map((candidate) => {
      const sparse = candidate.sparseVector as { indices: number[]; values: number[] };
      return { ...candidate, sparseVector: { indices: [...sparse.indices].reverse(), values: [...sparse.values].reverse() } };
    });
    expect(ids(applyStrategy(reordered, mmr(0.5), 2, 'sparse'))).toEqual(['fusion', 'bm25']);
  });

  it('in a fused query, counts redundancy on both vectors, weighted as the fusion weighs them', () => {
    // 'sibling' says something close in meaning (dense cosine 0.95 with 'top') in other words (sparse cosine 0).
    const one = (term: number) => ({ indices: [term], values: [1] });
    const pool: Candidate[] = [
      { id: 'top', score: 1, vector: [1, 0], sparseVector: one(1), metadata: {} },
      { id: 'copy', score: 0.98, vector: [1, 0], sparseVector: one(1), metadata: {} },
      { id: 'sibling', score: 0.9, vector: [0.95, Math.sqrt(1 - 0.95 ** 2)], sparseVector: one(2), metadata: {} },
      { id: 'far', score: 0, vector: [0, 1], sparseVector: one(3), metadata: {} },
    ];
    // Dense alone: sibling 0.5·0.9 − 0.5·0.95 < far 0 − 0; fused: sibling 0.45 − 0.5·(0.5·0.95 + 0.5·0) > 0.
    expect(ids(applyStrategy(pool, mmr(0.5), 2, 'dense'))).toEqual(['top', 'far']);
    expect(ids(applyStrategy(pool, mmr(0.5), 2, 'dbsf'))).toEqual(['top', 'sibling']);
    // A convex mix that is all dense weighs redundancy as dense alone does.
    expect(ids(applyStrategy(pool, mmr(0.5), 2, 'convex', { denseWeight: 1 }))).toEqual(['top', 'far']);
    expect(ids(applyStrategy(pool, mmr(0.5), 2, 'hybrid'))).toEqual(['top', 'sibling']);
  });

  it('falls back to the passages’ text when no candidate carries vectors', () => {
    const pool: Candidate[] = [
      { id: 'fusion', score: 0.031, metadata: { text: passages.fusion } },
      { id: 'fusion-again', score: 0.03, metadata: { text: passages.fusionAgain } },
      { id: 'chunking', score: 0.016, metadata: { text: passages.chunking } },
    ];
    expect(ids(applyStrategy(pool, mmr(0.5), 2, 'hybrid'))).toEqual(['fusion', 'chunking']);
  });

  it('rejects λ outside [0, 1] and vectors of different lengths', () => {
    const pool = duplicatePool();
    expect(() => applyStrategy(pool, mmr(1.5), 3, 'dense')).toThrow(RangeError);
    expect(() => applyStrategy(pool, mmr(Number.NaN), 3, 'dense')).toThrow(/lambda/);
    const mismatched: Candidate[] = [
      { id: 'x', score: 1, vector: [1, 0, 0], metadata: {} },
      { id: 'y', score: 0.5, vector: [1, 0], metadata: {} },
    ];
    expect(() => applyStrategy(mismatched, mmr(0.5), 2, 'dense')).toThrow(/2 and 3 dimensions|3 and 2 dimensions/);
  });
});

describe('default score thresholds per query mode', () => {
  it('dense: keeps (1 + cos) / 2 ≥ 0.65, that is cos ≥ 0.3', () => {
    const pool: Candidate[] = [
      { id: 'answering', score: (1 + 0.45) / 2, metadata: {} },
      { id: 'borderline', score: (1 + 0.3) / 2, metadata: {} },
      { id: 'unrelated', score: (1 + 0.1) / 2, metadata: {} },
    ];
    expect(ids(applyStrategy(pool, threshold(null), 5, 'dense'))).toEqual(['answering', 'borderline']);
  });

  it('sparse: keeps IDF-weighted BM25 scores ≥ 1', () => {
    const pool: Candidate[] = [
      { id: 'rare-term', score: 4.6, metadata: {} },
      { id: 'one-distinctive-term', score: 1.0, metadata: {} },
      { id: 'common-terms-only', score: 0.4, metadata: {} },
    ];
    expect(ids(applyStrategy(pool, threshold(null), 5, 'sparse'))).toEqual(['rare-term', 'one-distinctive-term']);
  });

  it('fused: keeps a chunk whose dense or sparse score passes alone, in fused order', () => {
    // Fused scores place a chunk against the others only; the single lists say whether it matches at all.
    const fused: Candidate[] = [
      { id: 'both', score: 1.9, metadata: {} },
      { id: 'keyword-only', score: 1.1, metadata: {} },
      { id: 'meaning-only', score: 1.0, metadata: {} },
      { id: 'best-of-nothing', score: 0.9, metadata: {} },
    ];
    const evidence = {
      dense: [
        { id: 'both', score: (1 + 0.6) / 2, metadata: {} },
        { id: 'meaning-only', score: (1 + 0.4) / 2, metadata: {} },
        { id: 'keyword-only', score: (1 + 0.2) / 2, metadata: {} },
        { id: 'best-of-nothing', score: (1 + 0.1) / 2, metadata: {} },
      ],
      sparse: [
        { id: 'keyword-only', score: 3.2, metadata: {} },
        { id: 'both', score: 2.0, metadata: {} },
        { id: 'best-of-nothing', score: 0.3, metadata: {} },
      ],
    };
    for (const mode of ['hybrid', 'dbsf', 'convex'] as QueryMode[]) {
      expect(ids(applyStrategy(fused, threshold(null), 10, mode, { evidence }))).toEqual([
        'both',
        'keyword-only',
        'meaning-only',
      ]);
      expect(ids(applyStrategy(fused, threshold(null), 2, mode, { evidence }))).toEqual(['both', 'keyword-only']);
    }
    // Nothing passes when neither list matches.
    const unrelated = { dense: evidence.dense.map((c) => ({ ...c, score: 0.55 })), sparse: [] };
    expect(applyStrategy(fused, threshold(null), 10, 'dbsf', { evidence: unrelated })).toEqual([]);
    expect(() => applyStrategy(fused, threshold(null), 10, 'hybrid')).toThrow(/dense and sparse lists/);
  });

  it('uses an explicit minScore as given, in any mode', () => {
    const pool: Candidate[] = [
      { id: 'x', score: 0.02, metadata: {} },
      { id: 'y', score: 0.01, metadata: {} },
    ];
    for (const mode of ['dense', 'sparse', 'hybrid'] as QueryMode[]) {
      expect(ids(applyStrategy(pool, threshold(0.015), 5, mode))).toEqual(['x']);
    }
    expect(() => applyStrategy(pool, threshold(Number.POSITIVE_INFINITY), 5, 'dense')).toThrow(/finite/);
  });
});

describe('input checks', () => {
  it('rejects a topK that is not a whole number ≥ 0', () => {
    expect(() => applyStrategy([], similarity, -1, 'dense')).toThrow(RangeError);
    expect(() => applyStrategy([], similarity, 2.5, 'dense')).toThrow(/topK/);
    expect(() => candidatePoolSize(similarity, Number.NaN)).toThrow(/topK/);
  });

  it('rejects a candidate without a finite score', () => {
    const pool: Candidate[] = [{ id: 'x', score: Number.NaN, metadata: {} }];
    expect(() => applyStrategy(pool, similarity, 1, 'dense')).toThrow(/Candidate x/);
  });
});

describe('candidatePoolSize', () => {
  it('fetches k for similarity and threshold', () => {
    expect(candidatePoolSize(similarity, 5)).toBe(5);
    expect(candidatePoolSize(threshold(null), 8)).toBe(8);
  });

  it('fetches max(4k, 20), at most 100 but never fewer than k, for MMR', () => {
    expect(candidatePoolSize(mmr(0.5), 1)).toBe(20);
    expect(candidatePoolSize(mmr(0.5), 5)).toBe(20);
    expect(candidatePoolSize(mmr(0.5), 10)).toBe(40);
    expect(candidatePoolSize(mmr(0.5), 30)).toBe(MAX_MMR_POOL);
    expect(candidatePoolSize(mmr(0.5), 150)).toBe(150);
  });
});
