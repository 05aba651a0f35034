import { describe, expect, it } from 'vitest';
import { chunkBlocks } from '../../../workers/ingest/src/chunking/chunk-blocks.ts';
import { MAX_BLOCK_CHARS } from '../../../workers/ingest/src/chunking/placed-blocks.ts';
import { charsWarning, ParseBudget } from '../../../workers/ingest/src/parsers/budget.ts';
import { parseDocx } from '../../../workers/ingest/src/parsers/docx.ts';
import { parsePptx } from '../../../workers/ingest/src/parsers/pptx.ts';
import { cleanCell } from '../../../workers/ingest/src/parsers/table-rows.ts';
import { DEFAULT_PARSE_LIMITS, type ParsedDocument } from '../../../workers/ingest/src/parsers/types.ts';
import { forEachElement, type XmlElement } from '../../../workers/ingest/src/parsers/xml.ts';
import { type ScanHandler, scan } from '../../../workers/ingest/src/parsers/xml-scan.ts';
import { TEXT_PIECE_CHARS } from '../../../workers/ingest/src/parsers/xml-window.ts';
import { docx, pptx } from '../../support/ooxml-files.ts';
import { seededRandom } from '../../support/seeded-random.ts';

/**
 * Text runs of megabytes (issue 21: a DOCX of one 16-million-character run took 239 MB): the
 * scanner hands a long text node over in pieces, a long paragraph is handed over in parts as it
 * streams past, and a DOCX or PPTX paragraph's text is taken from the budget as it is collected and
 * cut and tidied piece by piece. The fresh-process peaks are test/unit/hostile-files.test.ts's.
 */

const budget = () => new ParseBudget(DEFAULT_PARSE_LIMITS);

/** `count` words of seeded letters, one space between. */
function words(count: number, seed: number): string {
  const random = seededRandom(seed);
  return Array.from({ length: count }, () => 'abcdefgh'.slice(0, 1 + Math.floor(random() * 8))).join(' ');
}

/** Every text the scanner hands over, as it hands them over. */
function texts(xml: string | Iterable<string>): string[] {
  const out: string[] = [];
  const handler: ScanHandler = { open: () => undefined, close: () => {}, text: (text) => out.push(text) };
  scan(xml, handler, budget());
  return out;
}

/** `text` in pieces of `size`, as inflating hands them over. */
function* inPieces(text: string, size: number): Generator<string> {
  for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
}

const paragraphs = (doc: ParsedDocument) => doc.blocks.filter((b) => b.kind === 'paragraph');

describe('a long text node', () => {
  it('is handed over in pieces, each cut after a blank, that join to the whole', () => {
    const long = words(60_000, 1);
    const pieces = texts(inPieces(`<r><t>${long}</t></r>`, 1000));
    expect(pieces.length).toBeGreaterThan(2);
    expect(pieces.join('')).toBe(long);
    expect(Math.max(...pieces.map((p) => p.length))).toBeLessThan(3 * TEXT_PIECE_CHARS);
    expect(pieces.slice(0, -1).every((p) => p.endsWith(' '))).toBe(true);
  });

  it('is never cut inside a reference or a surrogate pair', () => {
    // No blank to cut after, and a reference or an emoji wherever a cut might fall.
    const unit = 'x&amp;y&#233;z😀';
    const long = unit.repeat(Math.ceil((4 * TEXT_PIECE_CHARS) / unit.length));
    for (const size of [997, 4096, 65_536]) {
      const pieces = texts(inPieces(`<r>${long}</r>`, size));
      expect(pieces.length).toBeGreaterThan(1);
      expect(pieces.join('')).toBe(long.replaceAll('&amp;', '&').replaceAll('&#233;', 'é'));
      expect(pieces.some((p) => /\p{Cs}/u.test(p))).toBe(false);
    }
  });

  it('comes whole when it is short', () => {
    expect(texts(inPieces(`<r><t>${'a '.repeat(1000)}</t><t>b</t></r>`, 7))).toEqual(['a '.repeat(1000), 'b']);
  });
});

describe('an element whose text runs long', () => {
  const doc = `<body><p n="1"><r><t>${'a'.repeat(50)}</t></r><r><t>${'b'.repeat(50)}</t></r><r><t>${'c'.repeat(50)}</t></r></p><p n="2"><r><t>d</t></r></p></body>`;
  const read = (allowed: boolean) => {
    const seen: { el: XmlElement; continued: boolean }[] = [];
    forEachElement(
      doc,
      (name) => name === 'p',
      (el, _path, continued) => seen.push({ el, continued }),
      budget(),
      { chars: 60, allowed: () => allowed },
    );
    return seen;
  };
  const text = (el: XmlElement): string => el.children.map((c) => (typeof c === 'string' ? c : text(c))).join('');

  it('is handed over in parts when allowed, its open elements going on in copies', () => {
    const seen = read(true);
    expect(seen.map(({ el, continued }) => [el.attrs.n, continued, text(el)])).toEqual([
      ['1', false, 'a'.repeat(50) + 'b'.repeat(50)],
      ['1', true, 'c'.repeat(50)],
      ['2', false, 'd'],
    ]);
    // The part after the cut starts with copies of the run and text element that were open, empty.
    const run = (children: string[]) => ({ name: 'r', attrs: {}, children: [{ name: 't', attrs: {}, children }] });
    expect(seen[1]!.el.children).toEqual([run([]), run(['c'.repeat(50)])]);
  });

  it('is handed over whole when not', () => {
    expect(read(false).map(({ el, continued }) => [el.attrs.n, continued, text(el).length])).toEqual([
      ['1', false, 150],
      ['2', false, 1],
    ]);
  });
});

describe('a DOCX paragraph of one long run', () => {
  // Longer than a part of the body (4 × MAX_BLOCK_CHARS), so that it is read in several.
  const long = words(200_000, 2);
  const file = docx(
    `<w:p><w:r><w:t>Before</w:t></w:r></w:p><w:p><w:pPr><w:pStyle w:val="Aufzhlung"/></w:pPr><w:r><w:t xml:space="preserve">${long}</w:t></w:r><w:r><w:t xml:space="preserve"> end</w:t></w:r></w:p><w:p><w:r><w:t>After</w:t></w:r></w:p>`,
  );

  it('is read in blocks of at most MAX_BLOCK_CHARS that read on as one, of the kind of the paragraph', () => {
    expect(long.length).toBeGreaterThan(4 * MAX_BLOCK_CHARS);
    const doc = parseDocx(file);
    expect(doc.warnings).toEqual([]);
    expect(doc.blocks[0]).toEqual({ kind: 'paragraph', text: 'Before' });
    expect(doc.blocks.at(-1)).toEqual({ kind: 'paragraph', text: 'After' });
    const wall = doc.blocks.slice(1, -1);
    expect(wall.length).toBeGreaterThan(long.length / MAX_BLOCK_CHARS);
    expect(wall.every((b) => b.kind === 'list_item' && b.text.length <= MAX_BLOCK_CHARS)).toBe(true);
    expect(wall[0]!.continues).toBeUndefined();
    expect(wall.slice(1).every((b) => b.continues)).toBe(true);
    // Chunked, the blocks join with a space, as the paragraph given whole does.
    const chunks = chunkBlocks(wall, { chunkSize: 1000, overlap: 0 });
    expect(chunks.map((c) => c.text).join(' ')).toBe(`${long} end`);
  });

  it('is taken from the budget as it is collected: cut where the budget ends, with its warning', () => {
    const doc = parseDocx(file, { ...DEFAULT_PARSE_LIMITS, maxChars: 100_000 });
    expect(doc.truncated).toBe(true);
    expect(doc.warnings).toEqual([charsWarning(100_000)]);
    const kept = doc.blocks.reduce((sum, b) => sum + b.text.length, 0);
    // "Before" and the paragraph up to the budget; not "After".
    expect(kept).toBeGreaterThan(99_000);
    expect(kept).toBeLessThanOrEqual(100_000);
    expect(doc.blocks.at(-1)!.text).not.toBe('After');
    expect(paragraphs(doc)[0]!.text).toBe('Before');
  });

  it('in a table cell is taken from the budget as it is collected too', () => {
    const cell = (text: string) => `<w:tc><w:p><w:r><w:t xml:space="preserve">${text}</w:t></w:r></w:p></w:tc>`;
    const table = `<w:tbl><w:tr>${cell('Name')}${cell('Notes')}</w:tr><w:tr>${cell('Ann')}${cell(long)}</w:tr></w:tbl>`;
    const whole = parseDocx(docx(table));
    expect(whole.blocks).toEqual([{ kind: 'table_row', text: `Name: Ann; Notes: ${long}` }]);
    const cut = parseDocx(docx(`${table}<w:p><w:r><w:t>After</w:t></w:r></w:p>`), { ...DEFAULT_PARSE_LIMITS, maxChars: 100_000 });
    expect(cut.truncated).toBe(true);
    expect(cut.warnings).toEqual([charsWarning(100_000)]);
  });
});

describe('a PPTX text frame of one long run', () => {
  const long = words(200_000, 3);
  const frame = `<p:sp><p:txBody><a:p><a:pPr><a:buChar char="•"/></a:pPr><a:r><a:t>${long}</a:t></a:r><a:r><a:t> end</a:t></a:r></a:p><a:p><a:r><a:t>Second</a:t></a:r></a:p></p:txBody></p:sp>`;
  const file = pptx([{ title: 'Deck title', shapes: frame, notes: 'Say it.' }]);

  it('is read in blocks of at most MAX_BLOCK_CHARS that read on as one, after the title', () => {
    const doc = parsePptx(file);
    expect(doc.warnings).toEqual([]);
    expect(doc.blocks[0]).toEqual({ kind: 'heading', text: 'Deck title', level: 1, page: 1 });
    expect(doc.blocks.slice(-2)).toEqual([
      { kind: 'paragraph', text: 'Second', page: 1 },
      { kind: 'paragraph', text: 'Speaker notes: Say it.', page: 1 },
    ]);
    const wall = doc.blocks.slice(1, -2);
    expect(wall.length).toBeGreaterThan(long.length / MAX_BLOCK_CHARS);
    expect(wall.every((b) => b.kind === 'list_item' && b.text.length <= MAX_BLOCK_CHARS && b.page === 1)).toBe(true);
    expect(wall[0]!.continues).toBeUndefined();
    expect(wall.slice(1).every((b) => b.continues)).toBe(true);
    const chunks = chunkBlocks(wall, { chunkSize: 1000, overlap: 0 });
    expect(chunks.map((c) => c.text).join(' ')).toBe(`${long} end`);
  });

  it('is taken from the budget as it is collected: cut where the budget ends, with its warning', () => {
    const doc = parsePptx(file, { ...DEFAULT_PARSE_LIMITS, maxChars: 100_000 });
    expect(doc.truncated).toBe(true);
    expect(doc.warnings).toEqual([charsWarning(100_000)]);
    const kept = doc.blocks.reduce((sum, b) => sum + b.text.length, 0);
    expect(kept).toBeGreaterThan(99_000);
    expect(kept).toBeLessThanOrEqual(100_000);
    expect(doc.blocks[0]!.text).toBe('Deck title');
  });
});

describe('a table cell of megabytes', () => {
  it('is cleaned a piece at a time, to what cleaning it whole gives', () => {
    const messy = words(150_000, 4).replaceAll(' ', ' \t\n ');
    expect(messy.length).toBeGreaterThan(4 * MAX_BLOCK_CHARS);
    expect(cleanCell(`  ${messy}\n`)).toBe(messy.replace(/\s+/g, ' '));
  });
});
