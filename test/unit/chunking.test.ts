import { describe, expect, it } from 'vitest';
import { splitSentences } from '#core/text/sentences.ts';
import type { Chunk } from '../../workers/ingest/src/chunking/chunk.ts';
import { chunkBlocks, defaultOverlap } from '../../workers/ingest/src/chunking/chunk-blocks.ts';
import type { Block } from '../../workers/ingest/src/parsers/types.ts';

const WORDS = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon'.split(
  ' ',
);

/** A deterministic pseudo-random generator, so generated documents are the same every run. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function sentence(next: () => number, id: string): string {
  const length = 4 + Math.floor(next() * 20);
  const words = Array.from({ length }, () => WORDS[Math.floor(next() * WORDS.length)]);
  return `S${id} ${words.join(' ')}.`;
}

function paragraph(next: () => number, id: string, sentences: number): string {
  return Array.from({ length: sentences }, (_, i) => sentence(next, `${id}.${i}`)).join(' ');
}

/** A document exercising every block kind, very long paragraphs and sentences, and a word longer than any chunk. */
function generatedDocument(seed: number): Block[] {
  const next = random(seed);
  const blocks: Block[] = [];
  let page = 1;
  for (let section = 0; section < 6; section++) {
    blocks.push({ kind: 'heading', text: `Heading ${section}`, level: 1 + (section % 3), page });
    for (let p = 0; p < 4; p++) {
      const sentences = p === 2 ? 40 : 1 + Math.floor(next() * 6);
      blocks.push({ kind: 'paragraph', text: paragraph(next, `${section}.${p}`, sentences), page });
      if (next() < 0.4) page++;
    }
    blocks.push({ kind: 'list_item', text: `Item ${section} ${paragraph(next, `L${section}`, 2)}`, page });
    if (section === 3) {
      blocks.push({
        kind: 'paragraph',
        text: `Runon ${Array.from({ length: 900 }, () => WORDS[Math.floor(next() * 20)]).join(' ')}`,
        page,
      });
      blocks.push({ kind: 'paragraph', text: `Longword ${'x'.repeat(9000)} end.`, page });
    }
    for (let row = 0; row < 12; row++)
      blocks.push({ kind: 'table_row', text: `R${section}.${row} | ${row * 3} | cell ${row}`, page });
  }
  return blocks;
}

const squash = (text: string) => text.replace(/\s+/g, '');

describe('chunkBlocks options', () => {
  it('rejects chunk sizes and overlaps outside the allowed range', () => {
    const blocks: Block[] = [{ kind: 'paragraph', text: 'Hello.' }];
    for (const chunkSize of [99, 8001, 500.5, Number.NaN]) {
      expect(() => chunkBlocks(blocks, { chunkSize })).toThrow(/chunkSize must be an integer from 100 to 8000/);
    }
    expect(() => chunkBlocks(blocks, { chunkSize: 1000, overlap: -1 })).toThrow(/overlap must be an integer from 0 to 500/);
    expect(() => chunkBlocks(blocks, { chunkSize: 1000, overlap: 501 })).toThrow(/overlap/);
    expect(defaultOverlap(1000)).toBe(150);
  });

  it('returns no chunks for a document with no text and ignores empty blocks', () => {
    expect(chunkBlocks([], { chunkSize: 1000 })).toEqual([]);
    const chunks = chunkBlocks(
      [
        { kind: 'paragraph', text: '   \n\t ' },
        { kind: 'paragraph', text: 'One  line\nwith\tspaces. ' },
        { kind: 'list_item', text: '' },
      ],
      { chunkSize: 1000 },
    );
    expect(chunks).toEqual([{ index: 0, text: 'One line with spaces.', metadata: {} }]);
  });
});

describe('chunkBlocks size bounds', () => {
  const sizes = [100, 101, 137, 250, 400, 555, 777, 1000, 1500, 2222, 3000, 4000];
  for (const chunkSize of sizes) {
    it(`keeps every chunk within ${chunkSize} characters, dense and in order`, () => {
      const chunks = chunkBlocks(generatedDocument(chunkSize), { chunkSize });
      expect(chunks.length).toBeGreaterThan(1);
      chunks.forEach((chunk, i) => {
        expect(chunk.index).toBe(i);
        expect(chunk.text.length).toBeGreaterThan(0);
        expect(chunk.text.length).toBeLessThanOrEqual(chunkSize);
        expect(chunk.text).toBe(chunk.text.trim());
        // No chunk but the last ends with a heading.
        if (i < chunks.length - 1) expect(chunk.text.split('\n').at(-1)).not.toMatch(/^Heading \d+$/);
      });
    });
  }

  it('loses and duplicates nothing when overlap is off', () => {
    for (const chunkSize of [100, 333, 1000, 4000]) {
      const blocks = generatedDocument(chunkSize).filter((block) => block.kind !== 'table_row');
      const chunks = chunkBlocks(blocks, { chunkSize, overlap: 0 });
      expect(squash(chunks.map((chunk) => chunk.text).join(''))).toBe(squash(blocks.map((block) => block.text).join('')));
    }
  });

  it('splits a long paragraph at sentence boundaries before word boundaries', () => {
    const next = random(7);
    const text = paragraph(next, 'p', 60);
    const sentences = splitSentences(text);
    const chunks = chunkBlocks([{ kind: 'paragraph', text }], { chunkSize: 500, overlap: 0 });
    expect(chunks.length).toBeGreaterThan(3);
    for (const chunk of chunks) {
      // Every chunk is a run of whole sentences.
      expect(chunk.text).toMatch(/^S\S+ .*\.$/);
      for (const part of splitSentences(chunk.text)) expect(sentences).toContain(part);
    }
  });

  it('cuts a sentence with no punctuation at spaces, and a word longer than a chunk only at the limit', () => {
    const runOn = Array.from({ length: 200 }, (_, i) => `word${i}`).join(' ');
    const chunks = chunkBlocks([{ kind: 'paragraph', text: runOn }], { chunkSize: 100 });
    for (const chunk of chunks) {
      expect(chunk.text.length).toBeLessThanOrEqual(100);
      expect(chunk.text).toMatch(/^word\d+( word\d+)*$/);
    }
    expect(chunks.map((chunk) => chunk.text).join(' ')).toBe(runOn);

    const long = `${'a'.repeat(250)} tail`;
    const hard = chunkBlocks([{ kind: 'paragraph', text: long }], { chunkSize: 100 });
    expect(hard.map((chunk) => chunk.text)).toEqual(['a'.repeat(100), 'a'.repeat(100), `${'a'.repeat(50)} tail`]);
  });
});

describe('chunkBlocks structure', () => {
  it('starts a chunk at each heading and keeps the heading with the text after it', () => {
    const next = random(3);
    const blocks: Block[] = [
      { kind: 'heading', text: 'Intro', level: 1 },
      { kind: 'paragraph', text: paragraph(next, 'a', 4) },
      { kind: 'heading', text: 'Methods', level: 1 },
      { kind: 'paragraph', text: paragraph(next, 'b', 30) },
    ];
    const chunks = chunkBlocks(blocks, { chunkSize: 600 });
    expect(chunks[0]?.text.startsWith('Intro\nSa.0 ')).toBe(true);
    expect(chunks[0]?.text).not.toContain('Methods');
    expect(chunks[1]?.text.startsWith('Methods\nSb.0 ')).toBe(true);
    expect(chunks[1]?.metadata.headings).toEqual(['Methods']);
  });

  it('moves a heading to the next chunk when the text after it does not fit beside it', () => {
    const filler = 'Short filler text of about sixty characters in total here.';
    const long = `${'Long sentence words '.repeat(17).trim()}.`;
    const blocks: Block[] = [
      { kind: 'paragraph', text: filler },
      { kind: 'heading', text: 'Next part', level: 2 },
      { kind: 'paragraph', text: `${long} Second sentence.` },
    ];
    // The filler is too small to stand alone before a heading, but the heading's first sentence cannot join them.
    const chunks = chunkBlocks(blocks, { chunkSize: 400 });
    expect(chunks.map((chunk) => chunk.text)).toEqual([filler, `Next part\n${long} Second sentence.`]);
    expect(chunks[1]?.metadata.headings).toEqual(['Next part']);
  });

  it('keeps a tiny chunk together with the next section instead of emitting it alone', () => {
    const blocks: Block[] = [
      { kind: 'heading', text: 'Report', level: 1 },
      { kind: 'paragraph', text: 'Draft.' },
      { kind: 'heading', text: 'Summary', level: 2 },
      { kind: 'paragraph', text: 'All targets were met.' },
    ];
    const chunks = chunkBlocks(blocks, { chunkSize: 1000 });
    expect(chunks).toHaveLength(1);
    expect(chunks[0]?.text).toBe('Report\nDraft.\nSummary\nAll targets were met.');
    expect(chunks[0]?.metadata.headings).toEqual(['Report']);
  });

  it('tracks the heading path through nested levels', () => {
    const body = (id: string) => ({ kind: 'paragraph' as const, text: `${id} ${'text '.repeat(60).trim()}.` });
    const blocks: Block[] = [
      { kind: 'heading', text: 'Guide', level: 1 },
      { kind: 'heading', text: 'Install', level: 2 },
      { kind: 'heading', text: 'Linux', level: 3 },
      body('linux'),
      { kind: 'heading', text: 'Usage', level: 2 },
      body('usage'),
      { kind: 'heading', text: 'Appendix', level: 1 },
      body('appendix'),
    ];
    const chunks = chunkBlocks(blocks, { chunkSize: 400 });
    expect(chunks.map((chunk) => chunk.metadata.headings)).toEqual([
      ['Guide', 'Install', 'Linux'],
      ['Guide', 'Usage'],
      ['Appendix'],
    ]);
    expect(chunks[0]?.text.startsWith('Guide\nInstall\nLinux\nlinux ')).toBe(true);
  });

  it('never splits a table row and repeats the header row when a table continues', () => {
    const rows = Array.from({ length: 50 }, (_, i) => `Row ${i} | value ${i * 7} | note number ${i}`);
    const blocks: Block[] = [
      { kind: 'paragraph', text: 'The table below lists every value.' },
      { kind: 'table_row', text: 'Row | Value | Note' },
      ...rows.map((text) => ({ kind: 'table_row' as const, text })),
    ];
    const chunks = chunkBlocks(blocks, { chunkSize: 300 });
    expect(chunks.length).toBeGreaterThan(3);
    const seen: string[] = [];
    for (const chunk of chunks) {
      expect(chunk.text.length).toBeLessThanOrEqual(300);
      for (const line of chunk.text.split('\n')) {
        expect([...rows, 'Row | Value | Note', 'The table below lists every value.']).toContain(line);
        if (/^Row \d/.test(line)) seen.push(line);
      }
    }
    expect(seen).toEqual(rows);
    for (const chunk of chunks.slice(1)) expect(chunk.text.startsWith('Row | Value | Note\n')).toBe(true);
  });

  it('moves a whole table to a fresh chunk rather than splitting it when it fits one', () => {
    const prose = 'Some introductory prose that takes up room. '.repeat(5).trim();
    const rows = ['A | 1', 'B | 2', 'C | 3', 'D | 4'];
    const chunks = chunkBlocks(
      [{ kind: 'paragraph', text: prose }, ...rows.map((text) => ({ kind: 'table_row' as const, text }))],
      { chunkSize: 240, overlap: 0 },
    );
    expect(chunks.map((chunk) => chunk.text)).toEqual([prose, rows.join('\n')]);
  });

  it('gives a page when a chunk stays on one page and a range when it spans pages', () => {
    const sentenceOn = (page: number, i: number) => `Page ${page} sentence ${i} has a few words.`;
    const blocks: Block[] = [1, 2, 3, 4].map((page) => ({
      kind: 'paragraph',
      text: Array.from({ length: 3 }, (_, i) => sentenceOn(page, i)).join(' '),
      page,
    }));
    const chunks = chunkBlocks(blocks, { chunkSize: 100, overlap: 0 });
    expect(chunks.map((chunk) => chunk.metadata)).toEqual([
      { page: 1 },
      { pages: [1, 2] },
      { page: 2 },
      { page: 3 },
      { pages: [3, 4] },
      { page: 4 },
    ]);
    expect(chunks[1]?.text).toBe(`${sentenceOn(1, 2)}\n${sentenceOn(2, 0)}`);
  });

  it('keeps each sheet of a spreadsheet in its own chunks and names it', () => {
    const blocks: Block[] = [
      { kind: 'table_row', text: 'Region | Sales', page: 1, sheet: 'Q1' },
      { kind: 'table_row', text: 'North | 10', page: 1, sheet: 'Q1' },
      { kind: 'table_row', text: 'Region | Sales', page: 2, sheet: 'Q2' },
      { kind: 'table_row', text: 'North | 12', page: 2, sheet: 'Q2' },
    ];
    const chunks = chunkBlocks(blocks, { chunkSize: 1000 });
    expect(chunks).toEqual([
      { index: 0, text: 'Region | Sales\nNorth | 10', metadata: { page: 1, sheet: 'Q1' } },
      { index: 1, text: 'Region | Sales\nNorth | 12', metadata: { page: 2, sheet: 'Q2' } },
    ]);
  });

  it('starts a chunk cut inside running text with the last whole sentence of the previous one', () => {
    const next = random(11);
    const text = paragraph(next, 'o', 40);
    const chunks = chunkBlocks([{ kind: 'paragraph', text }], { chunkSize: 800 });
    expect(chunks.length).toBeGreaterThan(2);
    let overlapped = 0;
    for (let i = 1; i < chunks.length; i++) {
      const previous = splitSentences(chunks[i - 1]?.text ?? '');
      const lastSentence = previous.at(-1) ?? '';
      if (lastSentence.length > defaultOverlap(800)) continue;
      expect(chunks[i]?.text.startsWith(`${lastSentence} `)).toBe(true);
      overlapped++;
    }
    expect(overlapped).toBeGreaterThan(0);
    // Without overlap the same text is not repeated.
    const plain = chunkBlocks([{ kind: 'paragraph', text }], { chunkSize: 800, overlap: 0 });
    expect(squash(plain.map((chunk) => chunk.text).join(''))).toBe(squash(text));
  });

  it('is deterministic', () => {
    const blocks = generatedDocument(42);
    const first: Chunk[] = chunkBlocks(blocks, { chunkSize: 700 });
    const second: Chunk[] = chunkBlocks(structuredClone(blocks), { chunkSize: 700 });
    expect(second).toEqual(first);
  });
});

describe('splitSentences', () => {
  it('splits at sentence ends but not at abbreviations, initials or decimals', () => {
    expect(
      splitSentences(
        'Dr. Smith gave 3.5 mg, e.g. in the U.S. lab, to J. R. Doe et al. in 2019. Did it work? Yes! "Mostly." ' +
          'See Fig. 2 and No. 5 for details. Results vs. controls differed. The answer was no. Then we stopped.',
      ),
    ).toEqual([
      'Dr. Smith gave 3.5 mg, e.g. in the U.S. lab, to J. R. Doe et al. in 2019.',
      'Did it work?',
      'Yes!',
      '"Mostly."',
      'See Fig. 2 and No. 5 for details.',
      'Results vs. controls differed.',
      'The answer was no.',
      'Then we stopped.',
    ]);
  });

  it('handles text without a final period and CJK sentence marks', () => {
    expect(splitSentences('No period here')).toEqual(['No period here']);
    expect(splitSentences('今日は晴れです。明日は雨です。')).toEqual(['今日は晴れです。', '明日は雨です。']);
    expect(splitSentences('   ')).toEqual([]);
  });
});
