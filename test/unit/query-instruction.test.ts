import { describe, expect, it } from 'vitest';
import { BGE_QUERY_INSTRUCTION, queryEmbeddingText, queryPrefixFor } from '#retrieval/query-instruction.ts';

describe('queryPrefixFor', () => {
  it("gives the English BGE models their card's instruction, by name, wherever they are served", () => {
    for (const model of [
      'bge-small-en-v1.5',
      '@cf/baai/bge-small-en-v1.5',
      '@cf/baai/bge-base-en-v1.5',
      'BAAI/bge-large-en-v1.5',
      'Xenova/bge-small-en-v1.5',
      'BAAI/bge-base-en',
    ]) {
      expect(queryPrefixFor(model, undefined), model).toBe(BGE_QUERY_INSTRUCTION);
    }
  });

  it('gives other models none', () => {
    for (const model of [
      undefined,
      '',
      'all-MiniLM-L6-v2',
      'text-embedding-3-small',
      'BAAI/bge-m3',
      'bge-small-zh-v1.5',
      'nomic-embed-text',
    ]) {
      expect(queryPrefixFor(model, undefined), String(model)).toBe('');
    }
  });

  it('takes EMBEDDING_QUERY_PREFIX over the name, ending it with one space; `none` turns it off', () => {
    expect(queryPrefixFor('text-embedding-3-small', 'query:')).toBe('query: ');
    expect(queryPrefixFor('bge-small-en-v1.5', '  query:  ')).toBe('query: ');
    expect(queryPrefixFor('bge-small-en-v1.5', 'none')).toBe('');
    expect(queryPrefixFor('bge-small-en-v1.5', 'NONE')).toBe('');
    expect(queryPrefixFor('bge-small-en-v1.5', '   ')).toBe(BGE_QUERY_INSTRUCTION);
  });

  it('puts the prefix before the question as it is', () => {
    expect(queryEmbeddingText(BGE_QUERY_INSTRUCTION, 'Is aspirin safe?')).toBe(
      'Represent this sentence for searching relevant passages: Is aspirin safe?',
    );
    expect(queryEmbeddingText('', 'Is aspirin safe?')).toBe('Is aspirin safe?');
  });
});
