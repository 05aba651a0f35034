import { stemmer as porterStem } from 'stemmer';
import { describe, expect, it } from 'vitest';
import { encodeDocument, encodeQuery, type SparseVector, termIndex, tokenize } from '#retrieval/sparse.ts';

// Word → stem pairs from Porter's 1980 paper (its examples, run through all five steps).
const PORTER_EXAMPLES: Array<[string, string]> = [
  ['caresses', 'caress'],
  ['ponies', 'poni'],
  ['ties', 'ti'],
  ['caress', 'caress'],
  ['cats', 'cat'],
  ['feed', 'feed'],
  ['agreed', 'agre'],
  ['plastered', 'plaster'],
  ['bled', 'bled'],
  ['motoring', 'motor'],
  ['sing', 'sing'],
  ['conflated', 'conflat'],
  ['troubled', 'troubl'],
  ['sized', 'size'],
  ['hopping', 'hop'],
  ['tanned', 'tan'],
  ['falling', 'fall'],
  ['hissing', 'hiss'],
  ['fizzed', 'fizz'],
  ['failing', 'fail'],
  ['filing', 'file'],
  ['happy', 'happi'],
  ['sky', 'sky'],
  ['relational', 'relat'],
  ['conditional', 'condit'],
  ['rational', 'ration'],
  ['valenci', 'valenc'],
  ['hesitanci', 'hesit'],
  ['digitizer', 'digit'],
  ['conformabli', 'conform'],
  ['radicalli', 'radic'],
  ['differentli', 'differ'],
  ['vileli', 'vile'],
  ['analogousli', 'analog'],
  ['vietnamization', 'vietnam'],
  ['predication', 'predic'],
  ['operator', 'oper'],
  ['feudalism', 'feudal'],
  ['decisiveness', 'decis'],
  ['hopefulness', 'hope'],
  ['callousness', 'callous'],
  ['formaliti', 'formal'],
  ['sensitiviti', 'sensit'],
  ['sensibiliti', 'sensibl'],
  ['triplicate', 'triplic'],
  ['formative', 'form'],
  ['formalize', 'formal'],
  ['electriciti', 'electr'],
  ['electrical', 'electr'],
  ['hopeful', 'hope'],
  ['goodness', 'good'],
  ['revival', 'reviv'],
  ['allowance', 'allow'],
  ['inference', 'infer'],
  ['airliner', 'airlin'],
  ['gyroscopic', 'gyroscop'],
  ['adjustable', 'adjust'],
  ['defensible', 'defens'],
  ['irritant', 'irrit'],
  ['replacement', 'replac'],
  ['adjustment', 'adjust'],
  ['dependent', 'depend'],
  ['adoption', 'adopt'],
  ['homologou', 'homolog'],
  ['communism', 'commun'],
  ['activate', 'activ'],
  ['angulariti', 'angular'],
  ['homologous', 'homolog'],
  ['effective', 'effect'],
  ['bowdlerize', 'bowdler'],
  ['probate', 'probat'],
  ['rate', 'rate'],
  ['cease', 'ceas'],
  ['controll', 'control'],
  ['roll', 'roll'],
  ['generalization', 'gener'],
  ['generalizations', 'gener'],
  ['oscillators', 'oscil'],
  ['cement', 'cement'],
];

describe('porterStem', () => {
  it.each(PORTER_EXAMPLES)('stems %s to %s', (word, stem) => {
    expect(porterStem(word)).toBe(stem);
  });

  it('leaves words of one or two letters alone', () => {
    expect(['is', 'as', 'us', 'a', '5'].map(porterStem)).toEqual(['is', 'as', 'us', 'a', '5']);
  });
});

describe('tokenize', () => {
  it('lowercases, drops stopwords and possessives, and stems', () => {
    expect(tokenize("The quick brown foxes are jumping over the lazy dog's back")).toEqual(
      'quick brown fox jump over lazi dog back'.split(' '),
    );
    expect(tokenize('This is not such a thing, and it was there.')).toEqual(['thing']);
  });

  it('keeps numbers, decimals and single letters whole', () => {
    expect(tokenize('IL-6 signalling rose 3.5-fold in 1,000 T cells (2019)')).toEqual(
      'il 6 signal rose 3.5 fold 1,000 t cell 2019'.split(' '),
    );
    expect(tokenize("Don’t split e.g. contractions; don't")).toEqual(["don't", 'split', 'e.g', 'contract', "don't"]);
  });

  it('is Unicode-aware', () => {
    expect(tokenize('Größe café ﬁnding Ωmega')).toEqual(['größe', 'café', 'find', 'ωmega']);
    // Ideographs are indexed one by one, as Chinese and Japanese have no spaces.
    expect(tokenize('東京タワー')).toEqual(['東', '京', 'タワー']);
    expect(tokenize('  ... --- !!! ')).toEqual([]);
  });

  it('drops tokens too long to be words', () => {
    expect(tokenize(`real ${'z'.repeat(65)} words`)).toEqual(['real', 'word']);
  });
});

describe('termIndex', () => {
  it('is 32-bit FNV-1a over UTF-8, kept to 31 bits', () => {
    // Published FNV-1a test vectors, without their top bit.
    expect(termIndex('')).toBe(0x811c9dc5 & 0x7fffffff);
    expect(termIndex('a')).toBe(0xe40c292c & 0x7fffffff);
    expect(termIndex('foobar')).toBe(0xbf9cf968 & 0x7fffffff);
    expect(termIndex('größe')).toBe(termIndex('größe'));
    expect(termIndex('größe')).not.toBe(termIndex('grosse'));
  });
});

function expectWellFormed(vector: SparseVector): void {
  expect(vector.values).toHaveLength(vector.indices.length);
  for (let i = 0; i < vector.indices.length; i++) {
    const index = vector.indices[i] ?? -1;
    expect(Number.isInteger(index) && index >= 0 && index < 2 ** 31).toBe(true);
    if (i > 0) expect(index).toBeGreaterThan(vector.indices[i - 1] ?? Number.POSITIVE_INFINITY);
    expect(vector.values[i]).toBeGreaterThan(0);
  }
}

function weightOf(vector: SparseVector, term: string): number {
  const position = vector.indices.indexOf(termIndex(term));
  return position === -1 ? 0 : (vector.values[position] ?? 0);
}

describe('encodeDocument', () => {
  it('gives sorted, unique indices with one positive value each', () => {
    const text = 'Zebra apple mango apple banana kiwi apple zebra. Cherries and grapes; mango! '.repeat(5);
    const vector = encodeDocument(text);
    expectWellFormed(vector);
    expect(vector.indices).toHaveLength(new Set(tokenize(text)).size);
    expect(encodeDocument(text)).toEqual(vector);
  });

  it('saturates with term frequency: more occurrences score higher, but never above k1 + 1', () => {
    const filler = 'alpha beta gamma delta epsilon zeta eta theta iota kappa';
    let previous = 0;
    for (let tf = 1; tf <= 30; tf++) {
      const value = weightOf(encodeDocument(`${'protein '.repeat(tf)}${filler}`), 'protein');
      expect(value).toBeGreaterThan(previous);
      expect(value).toBeLessThan(2.2);
      previous = value;
    }
    // Saturation: the 30th occurrence adds far less than the second did.
    const at = (tf: number) => weightOf(encodeDocument(`${'protein '.repeat(tf)}${filler}`), 'protein');
    expect(at(30) - at(29)).toBeLessThan((at(2) - at(1)) / 10);
  });

  it('scores a term lower in a longer document, unless b is 0', () => {
    const words = 'alpha beta gamma delta epsilon zeta eta theta iota kappa'.split(' ');
    let previous = Number.POSITIVE_INFINITY;
    for (const extra of [0, 10, 50, 200, 1000]) {
      const text = `protein ${Array.from({ length: extra }, (_, i) => words[i % words.length]).join(' ')}`;
      const value = weightOf(encodeDocument(text), 'protein');
      expect(value).toBeLessThan(previous);
      previous = value;
      expect(weightOf(encodeDocument(text, { b: 0 }), 'protein')).toBeCloseTo(1, 10);
    }
  });

  it('follows the BM25 formula with the given parameters', () => {
    const vector = encodeDocument('cells cells cells membrane', { k1: 1.5, b: 0.5, avgDocLength: 8 });
    const norm = 1.5 * (1 - 0.5 + (0.5 * 4) / 8);
    expect(weightOf(vector, 'cell')).toBeCloseTo((3 * 2.5) / (3 + norm), 12);
    expect(weightOf(vector, 'membran')).toBeCloseTo(2.5 / (1 + norm), 12);
  });

  it('returns an empty vector for text with no terms, and rejects bad parameters', () => {
    expect(encodeDocument('')).toEqual({ indices: [], values: [] });
    expect(encodeDocument('the of and')).toEqual({ indices: [], values: [] });
    expect(() => encodeDocument('x', { k1: -1 })).toThrow(/k1/);
    expect(() => encodeDocument('x', { b: 1.5 })).toThrow(/between 0 and 1/);
    expect(() => encodeDocument('x', { avgDocLength: 0 })).toThrow(/avgDocLength/);
  });
});

describe('encodeQuery', () => {
  it('weights each distinct term once and matches the document side', () => {
    const query = encodeQuery('What do T cells and cell membranes do?');
    expectWellFormed(query);
    expect(query.values.every((value) => value === 1)).toBe(true);
    expect(query.indices).toEqual(['what', 'do', 't', 'cell', 'membran'].map(termIndex).sort((a, b) => a - b));
    expect(encodeQuery('the and of')).toEqual({ indices: [], values: [] });
  });

  it('ranks the document about the query first once IDF is applied', () => {
    const documents = [
      'Vitamin D deficiency is associated with bone loss in elderly patients.',
      'Bone marrow transplants restore blood cell production.',
      'Patients with diabetes were followed for ten years.',
      'Elderly patients often take several medications.',
    ];
    const vectors = documents.map((text) => encodeDocument(text));
    const documentFrequency = new Map<number, number>();
    for (const vector of vectors)
      for (const index of vector.indices) documentFrequency.set(index, (documentFrequency.get(index) ?? 0) + 1);
    // Upstash's IDF weighting: ln(1 + (N − n + 0.5) / (n + 0.5)).
    const idf = (index: number) => {
      const n = documentFrequency.get(index) ?? 0;
      return Math.log(1 + (vectors.length - n + 0.5) / (n + 0.5));
    };
    const query = encodeQuery('Does vitamin D deficiency cause bone loss?');
    const scores = vectors.map((vector) =>
      query.indices.reduce((score, index, i) => {
        const position = vector.indices.indexOf(index);
        return position === -1 ? score : score + (query.values[i] ?? 0) * idf(index) * (vector.values[position] ?? 0);
      }, 0),
    );
    expect(scores.indexOf(Math.max(...scores))).toBe(0);
    expect(scores[2]).toBe(0);
  });
});
