import { describe, expect, it } from 'vitest';
import type { Models } from '#core/adapters/models.ts';
import { chooseAfterRerank, rerankCandidates, rerankRequestFor, rerankText } from '#retrieval/rerank.ts';
import type { Candidate } from '#retrieval/strategies.ts';

// Pure logic of src/retrieval/rerank.ts, with a reranker written here; the real one runs in
// test/api/query-rerank.test.ts and test/devstack/rerank.test.ts.
const candidate = (id: string, score: number, text = id, extra: Record<string, unknown> = {}): Candidate => ({
  id,
  score,
  metadata: { text, ...extra },
});
// Fused order a, b, c, d, e.
const FOUND = [candidate('c', 0.6), candidate('a', 0.9), candidate('e', 0.2), candidate('b', 0.8), candidate('d', 0.4)];

/** A reranker that scores each passage by the number given for its text. */
const scoring =
  (scores: Record<string, number>): NonNullable<Models['rerank']> =>
  async (_query, passages) =>
    passages
      .map((text, index) => ({ index, score: scores[text.split('\n').at(-1) as string] ?? 0 }))
      .sort((x, y) => y.score - x.score);

const on = { enabled: true, candidates: 3 };
const budget = { budgetMs: 500 };

describe('rerankCandidates', () => {
  it('reranks the best fused candidates only; the rest follow in fused order, unscored', async () => {
    const reranked = await rerankCandidates(scoring({ a: 0.1, b: 0.2, c: 0.9 }), 'q', FOUND, on, { ...budget, order: 'replace' });
    expect(reranked.outcome).toMatchObject({ applied: true, candidates: 3 });
    expect(reranked.ordered.map((c) => c.id)).toEqual(['c', 'b', 'a', 'd', 'e']);
    expect([...reranked.scores.keys()].sort()).toEqual(['a', 'b', 'c']);
    expect(reranked.scores.get('c')).toBe(0.9);
  });

  it('fuses the two orders by reciprocal rank: a passage both like comes first, a tie goes to the fused order', async () => {
    // Reranker: c, b, a. Fused: a, b, c. b is second in both; a and c tie, and a is first in fused order.
    const reranked = await rerankCandidates(scoring({ a: 0.1, b: 0.2, c: 0.9 }), 'q', FOUND, on, { ...budget, order: 'rrf' });
    expect(reranked.ordered.map((c) => c.id).slice(0, 3)).toEqual(['a', 'c', 'b']);
    // The tie goes to the fused order even where the ids would sort the other way.
    const named = [candidate('z', 0.9), candidate('m', 0.8), candidate('b', 0.7)];
    const tie = await rerankCandidates(scoring({ z: 0.1, m: 0.2, b: 0.9 }), 'q', named, on, { ...budget, order: 'rrf' });
    expect(tie.ordered.map((c) => c.id)).toEqual(['z', 'b', 'm']);
    // and the strategy, which sorts by score then id, keeps it.
    const chosen = chooseAfterRerank(named, tie, { kind: 'similarity' }, 3, 'hybrid', {});
    expect(chosen.map((c) => c.id)).toEqual(['z', 'b', 'm']);
    const pulled = await rerankCandidates(scoring({ a: 0.1, b: 0.95, c: 0.9 }), 'q', FOUND, on, { ...budget, order: 'rrf' });
    expect(pulled.ordered.map((c) => c.id).slice(0, 3)).toEqual(['b', 'a', 'c']);
  });

  it('leaves the fused order, with the reason, when off, missing, failing, slow or incomplete', async () => {
    const fused = ['a', 'b', 'c', 'd', 'e'];
    const cases: [NonNullable<Models['rerank']> | null, boolean, RegExp][] = [
      [scoring({}), false, /^off$/],
      [null, true, /no reranking model/],
      [
        async () => {
          throw new Error('HTTP 500 from upstream');
        },
        true,
        /^the reranker failed$/,
      ],
      [() => new Promise(() => {}), true, /longer than 500 ms/],
      [async () => [{ index: 0, score: 0.5 }], true, /did not score every candidate/],
      [async () => [0, 1, 7].map((index) => ({ index, score: 0.5 })), true, /did not score every candidate/],
    ];
    for (const [rerank, enabled, reason] of cases) {
      const reranked = await rerankCandidates(rerank, 'q', FOUND, { enabled, candidates: 3 }, budget);
      expect(reranked.outcome.applied).toBe(false);
      expect(reranked.outcome.applied ? '' : reranked.outcome.reason).toMatch(reason);
      expect(reranked.ordered.map((c) => c.id)).toEqual(fused);
      expect(reranked.scores.size).toBe(0);
    }
  });

  it('aborts the call at the budget, and times it', async () => {
    let signal: AbortSignal | undefined;
    const started = performance.now();
    const reranked = await rerankCandidates(
      async (_q, _p, options) => {
        signal = options.abortSignal;
        await new Promise((resolve) => setTimeout(resolve, 2000));
        return [];
      },
      'q',
      FOUND,
      on,
      { budgetMs: 100 },
    );
    expect(performance.now() - started).toBeLessThan(1000);
    expect(signal?.aborted).toBe(true);
    expect(reranked.outcome).toMatchObject({ applied: false, latencyMs: expect.any(Number) });
  });

  it('sends the heading path before the text, and asks for the passage token cap', async () => {
    let seen: { passages: string[]; max?: number } | undefined;
    await rerankCandidates(
      async (_q, passages, options) => {
        seen = { passages, max: options.maxTokensPerPassage };
        return passages.map((_, index) => ({ index, score: 0.5 }));
      },
      'q',
      [candidate('x', 1, 'Body text.', { headings: ['Intro', 'Scope'] })],
      on,
      budget,
    );
    expect(seen?.passages[0]).toBe(rerankText(candidate('x', 1, 'Body text.', { headings: ['Intro', 'Scope'] })));
    expect(seen?.passages[0]).toMatch(/Body text\.$/);
    expect(seen?.max).toBeGreaterThan(0);
  });
});

describe('chooseAfterRerank', () => {
  it('takes the reranked order for similarity and gives each source its index score back', async () => {
    const reranked = await rerankCandidates(scoring({ a: 0.1, b: 0.2, c: 0.9 }), 'q', FOUND, on, { ...budget, order: 'replace' });
    const chosen = chooseAfterRerank(FOUND, reranked, { kind: 'similarity' }, 2, 'hybrid', {});
    expect(chosen.map((c) => [c.id, c.score])).toEqual([
      ['c', 0.6],
      ['b', 0.8],
    ]);
  });

  it("decides a threshold on the index's scores, then keeps the reranked order", async () => {
    const reranked = await rerankCandidates(scoring({ a: 0.1, b: 0.2, c: 0.9 }), 'q', FOUND, on, { ...budget, order: 'replace' });
    const chosen = chooseAfterRerank(FOUND, reranked, { kind: 'threshold', minScore: 0.7 }, 5, 'dense', {});
    // c (0.6) is the reranker's favourite but under the cut-off.
    expect(chosen.map((c) => c.id)).toEqual(['b', 'a']);
  });

  it('applies MMR to the reranked order, and the plain strategy when reranking did not apply', async () => {
    const reranked = await rerankCandidates(scoring({ a: 0.1, b: 0.2, c: 0.9 }), 'q', FOUND, on, { ...budget, order: 'replace' });
    const mmr = chooseAfterRerank(FOUND, reranked, { kind: 'mmr', lambda: 1 }, 3, 'hybrid', {});
    expect(mmr.map((c) => c.id)).toEqual(['c', 'b', 'a']);
    const off = await rerankCandidates(null, 'q', FOUND, on, budget);
    expect(chooseAfterRerank(FOUND, off, { kind: 'similarity' }, 3, 'hybrid', {}).map((c) => c.id)).toEqual(['a', 'b', 'c']);
  });
});

describe('rerankRequestFor', () => {
  const collection = (config: Record<string, unknown>) => ({ config });
  it('follows the request, else every collection, else the default (off, 10)', () => {
    expect(rerankRequestFor([], undefined)).toEqual({ enabled: false, candidates: 10 });
    expect(rerankRequestFor([collection({ rerank: true, rerank_candidates: 20 })], undefined)).toEqual({
      enabled: true,
      candidates: 20,
    });
    expect(rerankRequestFor([collection({ rerank: true })], false).enabled).toBe(false);
    expect(rerankRequestFor([collection({})], true).enabled).toBe(true);
    // Several collections: on only when all are; the most candidates any asks for.
    const both = [collection({ rerank: true, rerank_candidates: 5 }), collection({ rerank: false, rerank_candidates: 30 })];
    expect(rerankRequestFor(both, undefined)).toEqual({ enabled: false, candidates: 30 });
    // A stored count out of range is clamped, a bad one ignored.
    expect(rerankRequestFor([collection({ rerank_candidates: 500 })], true).candidates).toBe(50);
    expect(rerankRequestFor([collection({ rerank_candidates: 'many' })], true).candidates).toBe(10);
  });
});
