import { describe, expect, it } from 'vitest';
import { percentile } from '../../bench/harness/stats.ts';
import { documentRanking, ndcgAtK, parseQrels, recallAtK } from '../../bench/retrieval/metrics.ts';

const judged = (entries: Record<string, number>) => new Map(Object.entries(entries));

describe('parseQrels', () => {
  it('reads a BEIR qrels file with its header, grouping judgements by query', () => {
    const qrels = parseQrels('query-id\tcorpus-id\tscore\n0\t31715818\t1\n2\t13734012\t1\n2\t99\t2\n');
    expect([...qrels.keys()]).toEqual(['0', '2']);
    expect(qrels.get('2')).toEqual(judged({ '13734012': 1, '99': 2 }));
  });

  it('names the line of a malformed row', () => {
    expect(() => parseQrels('query-id\tcorpus-id\tscore\n0\t1\n')).toThrow(/line 2/);
    expect(() => parseQrels('query-id\tcorpus-id\tscore\n0\t1\thigh\n')).toThrow(/line 2/);
  });
});

describe('ndcgAtK', () => {
  it('is 1 for the ideal ranking and 0 when nothing relevant is found', () => {
    expect(ndcgAtK(['a', 'b', 'x'], judged({ a: 1, b: 1 }), 10)).toBeCloseTo(1, 12);
    expect(ndcgAtK(['x', 'y'], judged({ a: 1 }), 10)).toBe(0);
    expect(ndcgAtK([], judged({ a: 1 }), 10)).toBe(0);
  });

  it('discounts by log2(rank + 1) and takes the ideal from all judged documents', () => {
    // b at rank 2; d never retrieved but in the ideal: (1/log2 3) / (1 + 1/log2 3)
    expect(ndcgAtK(['a', 'b', 'c'], judged({ b: 1, d: 1 }), 10)).toBeCloseTo(0.386853, 6);
  });

  it('uses graded relevance as the gain, as trec_eval does', () => {
    // (1 + 2/log2 3) / (2 + 1/log2 3)
    expect(ndcgAtK(['b', 'a'], judged({ a: 2, b: 1 }), 10)).toBeCloseTo(0.859719, 6);
  });

  it('only counts the first k results', () => {
    const ranked = [...Array.from({ length: 10 }, (_, i) => `x${i}`), 'a'];
    expect(ndcgAtK(ranked, judged({ a: 1 }), 10)).toBe(0);
    expect(ndcgAtK(ranked, judged({ a: 1 }), 11)).toBeCloseTo(1 / Math.log2(12), 12);
  });
});

describe('recallAtK', () => {
  it('is the share of relevant documents in the first k, ignoring zero judgements', () => {
    expect(recallAtK(['a', 'x', 'b'], judged({ a: 1, b: 1, c: 1, z: 0 }), 50)).toBeCloseTo(2 / 3, 12);
    expect(recallAtK(['a', 'x', 'b'], judged({ a: 1, b: 1 }), 2)).toBe(0.5);
    expect(recallAtK(['a'], judged({ z: 0 }), 50)).toBe(0);
  });
});

describe('documentRanking', () => {
  it('keeps each document once, at the place of its first chunk', () => {
    const sources = [{ source: '7.txt' }, { source: '3.txt' }, { source: '7.txt' }, { source: '9.txt' }];
    expect(documentRanking(sources, (s) => s.replace(/\.txt$/, ''))).toEqual(['7', '3', '9']);
  });
});

describe('percentile', () => {
  it('takes the nearest rank', () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(percentile(values, 50)).toBe(50);
    expect(percentile(values, 99)).toBe(99);
    expect(percentile([5], 99)).toBe(5);
    expect(percentile([], 50)).toBeNaN();
  });
});
