import { describe, expect, it } from 'vitest';
import { chunkDocument } from '../../../workers/ingest/src/chunking/chunk-blocks.ts';
import { MAX_BLOCK_CHARS } from '../../../workers/ingest/src/chunking/placed-blocks.ts';
import { csvRecords, MAX_CSV_FIELDS, parseCsv } from '../../../workers/ingest/src/parsers/csv.ts';
import { MAX_READABILITY_NODES, parseHtml } from '../../../workers/ingest/src/parsers/html.ts';
import { parseText } from '../../../workers/ingest/src/parsers/text.ts';
import { type Block, DEFAULT_PARSE_LIMITS } from '../../../workers/ingest/src/parsers/types.ts';
import { parseXlsx } from '../../../workers/ingest/src/parsers/xlsx.ts';
import { xlsx } from '../../support/ooxml-files.ts';
import { utf8 } from '../../support/parsing.ts';

/** What each parser does at the edges of the document's budget and of the sizes it reads whole. */

const cell = (ref: string, text: string) => `<c r="${ref}" t="inlineStr"><is><t>${text}</t></is></c>`;
const texts = (blocks: Block[], kind: Block['kind']) => blocks.filter((b) => b.kind === kind).map((b) => b.text);

describe('XLSX rows', () => {
  it('keep a cell in the last column under its header, without the columns before it', () => {
    const rows = `<row r="1">${cell('A1', 'Name')}${cell('XFD1', 'Far')}</row><row r="2">${cell('A2', 'Ann')}${cell('XFD2', 'edge')}</row>`;
    expect(texts(parseXlsx(xlsx([{ name: 'S', rows }])).blocks, 'table_row')).toEqual(['Name: Ann; Far: edge']);
  });

  it('put cells given out of order back in column order', () => {
    const rows = `<row r="1">${cell('B1', 'Second')}${cell('A1', 'First')}</row><row r="2">${cell('B2', '2')}${cell('A2', '1')}</row>`;
    expect(texts(parseXlsx(xlsx([{ name: 'S', rows }])).blocks, 'table_row')).toEqual(['First: 1; Second: 2']);
  });

  it('spread merged cells even when rows come out of order', () => {
    const row = (r: number, ...cells: [string, string][]) =>
      `<row r="${r}">${cells.map(([c, t]) => cell(`${c}${r}`, t)).join('')}</row>`;
    const rows =
      row(1, ['A', 'Region'], ['B', 'City'], ['C', 'Pop']) +
      row(4, ['B', 'Bergen'], ['C', '285']) +
      row(2, ['A', 'North'], ['B', 'Oslo'], ['C', '700']) +
      row(3, ['B', 'Tromsø'], ['C', '77']);
    const tail = '<mergeCells count="1"><mergeCell ref="A2:A4"/></mergeCells>';
    expect(texts(parseXlsx(xlsx([{ name: 'S', rows, tail }])).blocks, 'table_row')).toEqual([
      'City: Bergen; Pop: 285',
      'Region: North; City: Oslo; Pop: 700',
      'Region: North; City: Tromsø; Pop: 77',
    ]);
  });

  it('stop at the character budget, keeping the rows read and saying so', () => {
    const rows = Array.from(
      { length: 100 },
      (_, i) => `<row r="${i + 1}">${cell(`A${i + 1}`, `row${i}`)}${cell(`B${i + 1}`, 'x'.repeat(100))}</row>`,
    ).join('');
    const doc = parseXlsx(xlsx([{ name: 'S', rows }]), { ...DEFAULT_PARSE_LIMITS, maxChars: 2_000 });
    expect(doc.truncated).toBe(true);
    expect(doc.warnings).toEqual(['The document has more than 2,000 characters of text; only the first 2,000 were read']);
    expect(texts(doc.blocks, 'table_row').length).toBeGreaterThan(10);
    expect(texts(doc.blocks, 'table_row').length).toBeLessThan(20);
  });
});

describe('CSV records', () => {
  it(`keep at most ${MAX_CSV_FIELDS} fields and say the rest were skipped`, () => {
    const fields = { max: MAX_CSV_FIELDS, cut: false };
    const [record] = [...csvRecords(`${'a,'.repeat(20_000)}end\n`, ',', fields)];
    expect(record).toHaveLength(MAX_CSV_FIELDS);
    expect(fields.cut).toBe(true);
    const doc = parseCsv(utf8(`x,y\n1,2${',3'.repeat(20_000)}\n`));
    expect(doc.warnings).toEqual([
      `A record has more than ${MAX_CSV_FIELDS} fields; only the first ${MAX_CSV_FIELDS} of each were read`,
    ]);
  });

  it('count the header again in every row', () => {
    const header = Array.from({ length: 5 }, (_, i) => `header ${i} ${'h'.repeat(200)}`).join(',');
    const doc = parseCsv(utf8(`${header}\n${'1,2,3,4,5\n'.repeat(1_000)}`), { ...DEFAULT_PARSE_LIMITS, maxChars: 50_000 });
    expect(doc.truncated).toBe(true);
    // Each row repeats about 1,050 characters of header: some 45 rows fit 50,000.
    expect(doc.blocks.length).toBeGreaterThan(40);
    expect(doc.blocks.length).toBeLessThan(50);
  });
});

describe('text', () => {
  it('cuts one huge paragraph at the budget rather than losing it', () => {
    const doc = parseText(utf8('word '.repeat(10_000)), 'txt', { ...DEFAULT_PARSE_LIMITS, maxChars: 1_000 });
    expect(doc.blocks).toHaveLength(1);
    expect(doc.blocks[0]!.text).toHaveLength(1_000);
    expect(doc.warnings).toEqual(['The document has more than 1,000 characters of text; only the first 1,000 were read']);
  });

  it('stops at the step budget with a plain warning', () => {
    const doc = parseText(utf8('line\n\n'.repeat(1_000)), 'md', { ...DEFAULT_PARSE_LIMITS, maxSteps: 100 });
    expect(doc.blocks.length).toBeLessThanOrEqual(100);
    expect(doc.warnings).toEqual(['The document is too complex to read in full; only its first part was read']);
  });
});

describe('HTML', () => {
  it('reads a page too deep for any tree walk as plain text', () => {
    const html = `<html><head><title>Deep</title></head><body><p>Top</p>${'<div>'.repeat(5_000)}Bottom${'</div>'.repeat(5_000)}</body></html>`;
    expect(texts(parseHtml(utf8(html), null, '').blocks, 'paragraph')).toEqual(['Top', 'Bottom']);
  });

  it('reads a page too large for Readability by its structure', () => {
    const items = '<p>Item text here.</p>'.repeat(MAX_READABILITY_NODES);
    const html = `<html><head><title>Big</title></head><body><nav>Menu</nav><h2>Section</h2>${items}</body></html>`;
    const doc = parseHtml(utf8(html), null, '');
    expect(doc.blocks.slice(0, 3)).toEqual([
      { kind: 'heading', text: 'Big', level: 1 },
      { kind: 'heading', text: 'Section', level: 2 },
      { kind: 'paragraph', text: 'Item text here.' },
    ]);
    expect(doc.blocks).toHaveLength(MAX_READABILITY_NODES + 2);
  });
});

describe('chunking', () => {
  const paragraph: Block = { kind: 'paragraph', text: Array.from({ length: 40_000 }, (_, i) => `w${i}`).join(' ') };

  it('stops at maxChunks and says it did', () => {
    expect(chunkDocument([paragraph], { chunkSize: 1000, maxChunks: 10 })).toMatchObject({ truncated: true });
    expect(chunkDocument([paragraph], { chunkSize: 1000, maxChunks: 10 }).chunks).toHaveLength(10);
    expect(chunkDocument([paragraph], { chunkSize: 8000 }).truncated).toBe(false);
  });

  it(`cuts a block over ${MAX_BLOCK_CHARS} characters into parts that rejoin with a space`, () => {
    expect(paragraph.text.length).toBeGreaterThan(2 * MAX_BLOCK_CHARS);
    const { chunks } = chunkDocument([paragraph], { chunkSize: 8000, overlap: 0 });
    expect(chunks.every((c) => c.text.length <= 8000 && !c.text.includes('\n'))).toBe(true);
    expect(chunks.map((c) => c.text).join(' ')).toBe(paragraph.text);
  });
});
