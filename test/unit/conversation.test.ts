import { describe, expect, it } from 'vitest';
import { historyMessages, searchQuery, turnsOf } from '#retrieval/conversation.ts';
import { encodeQuery } from '#retrieval/sparse.ts';

const weightOf = (query: { indices: number[]; values: number[] }, word: string) => {
  const [index] = encodeQuery(word).indices;
  return query.values[query.indices.indexOf(index as number)] ?? 0;
};

describe('conversation', () => {
  it('pairs each question with the answer after it, skipping one left unanswered', () => {
    expect(
      turnsOf([
        { role: 'assistant', content: 'orphan' },
        { role: 'user', content: 'Q1' },
        { role: 'assistant', content: 'A1' },
        { role: 'user', content: 'Q2' },
      ]),
    ).toEqual([{ question: 'Q1', answer: 'A1' }]);
  });

  it('is the question alone with no earlier turns', () => {
    expect(searchQuery('vaccine storage temperature', [])).toEqual({
      text: 'vaccine storage temperature',
      sparse: encodeQuery('vaccine storage temperature'),
    });
  });

  it('carries the terms of earlier questions at lower weights, the latest weighing most', () => {
    const turns = [
      { question: 'aspirin trials', answer: 'a' },
      { question: 'vaccine storage', answer: 'b' },
    ];
    const query = searchQuery('what about refrigeration?', turns);
    expect(query.text).toBe('aspirin trials\nvaccine storage\nwhat about refrigeration?');
    expect(weightOf(query.sparse, 'refrigeration')).toBe(1);
    expect(weightOf(query.sparse, 'vaccine')).toBe(0.5);
    expect(weightOf(query.sparse, 'aspirin')).toBe(0.25);
    // A term asked again now takes the full weight.
    expect(weightOf(searchQuery('vaccine doses', turns).sparse, 'vaccine')).toBe(1);
  });

  it('sends the latest turns that fit the token budget, oldest first, with long answers cut', () => {
    const turns = [
      { question: 'old', answer: 'x'.repeat(3000) },
      { question: 'middle', answer: 'y'.repeat(100) },
      { question: 'latest', answer: 'z'.repeat(100) },
    ];
    expect(historyMessages(turns, 100).map((m) => m.content.slice(0, 6))).toEqual(['middle', 'yyyyyy', 'latest', 'zzzzzz']);
    const all = historyMessages(turns, 10_000);
    expect(all).toHaveLength(6);
    expect(all[1]?.content).toHaveLength(2001);
    expect(historyMessages(turns, 0)).toEqual([]);
  });
});
