import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseDocument } from '../../../workers/ingest/src/parsers/index.ts';
import { MAX_LINE_CHARS, MAX_PARAGRAPH_CHARS } from '../../../workers/ingest/src/parsers/markdown.ts';
import { MAX_TEXT_BYTES, parseText } from '../../../workers/ingest/src/parsers/text.ts';
import { fixture } from '../../support/documents.ts';
import { failure, rejection, utf8 } from '../../support/parsing.ts';

describe('parseText (txt)', () => {
  it('splits paragraphs on blank lines and keeps line breaks inside them', () => {
    const doc = parseText(utf8('First line\nsecond line\n\n\n  Next paragraph  \r\n\r\nLast'), 'txt');
    expect(doc.blocks).toEqual([
      { kind: 'paragraph', text: 'First line\nsecond line' },
      { kind: 'paragraph', text: 'Next paragraph' },
      { kind: 'paragraph', text: 'Last' },
    ]);
  });

  it('reads the OCR ground-truth fixture', () => {
    const text = parseText(fixture('scan-linn-2col.groundtruth.txt'), 'txt')
      .blocks.map((b) => b.text)
      .join('\n');
    expect(text.length).toBeGreaterThan(3000);
  });

  it('decodes UTF-16 with a BOM', () => {
    const le = new Uint8Array([0xff, 0xfe, ...Buffer.from('Grüße\n\nzweiter Absatz', 'utf16le')]);
    expect(parseText(le, 'txt').blocks.map((b) => b.text)).toEqual(['Grüße', 'zweiter Absatz']);
  });

  it('refuses binary disguised as text', () => {
    for (const bytes of [
      Uint8Array.of(0x68, 0x69, 0x00, 0x00, 0x01, 0x02),
      utf8(`text with controls ${'\u0001\u0002\u0003'.repeat(5)}`),
      Uint8Array.of(0x48, 0xc3, 0x28, 0x20, 0x61, 0x62),
      fixture('paper-with-table.pdf'),
    ]) {
      expect(failure(() => parseText(bytes, 'txt'))).toMatchObject({ reason: 'corrupt', message: 'The file is not valid text' });
    }
  });

  it('refuses invalid UTF-8 past the sniffed head', () => {
    const bytes = new Uint8Array([...utf8('a'.repeat(70_000)), 0xff, 0xfe, 0x41]);
    expect(failure(() => parseText(bytes, 'md')).reason).toBe('corrupt');
  });

  it('reports whitespace-only files as empty', () => {
    expect(failure(() => parseText(utf8(' \n\r\n\t '), 'txt'))).toMatchObject({
      reason: 'empty',
      message: 'The document is empty',
    });
  });

  it('reads only the first MAX_TEXT_BYTES, with a warning', () => {
    const line = 'ab€\n';
    const big = utf8(line.repeat(Math.ceil((MAX_TEXT_BYTES + 10) / utf8(line).length)));
    const doc = parseText(big, 'txt');
    expect(doc.warnings).toEqual([`Only the first ${MAX_TEXT_BYTES / 1024 / 1024} MB of the file were read`]);
    expect(doc.blocks[0]!.text.endsWith('\uFFFD')).toBe(false);
  });
});

describe('parseText (md)', () => {
  it('keeps headings, lists, tables and code', () => {
    const md = [
      '---',
      'title: Notes',
      '---',
      '# Main *title* #',
      '',
      'Intro with **bold**, `code` and a [link](https://example.com).',
      'Second line.',
      '',
      'Setext Heading',
      '==============',
      '',
      'Sub heading',
      '---',
      '',
      '- first item',
      '  continued',
      '* second item',
      '2. third item',
      '',
      '| Name | Age |',
      '| :--- | --: |',
      '| Ann  | 31  |',
      '| Bob \\| Jr | 40 |',
      '',
      '```ts',
      'const x = 1;',
      '',
      '# not a heading',
      '```',
      '',
      '> quoted',
      '',
      '***',
      '###### Deep',
    ].join('\n');
    expect(parseText(utf8(md), 'md').blocks).toEqual([
      { kind: 'paragraph', text: 'title: Notes' },
      { kind: 'heading', text: 'Main *title*', level: 1 },
      { kind: 'paragraph', text: 'Intro with bold, code and a link. Second line.' },
      { kind: 'heading', text: 'Setext Heading', level: 1 },
      { kind: 'heading', text: 'Sub heading', level: 2 },
      { kind: 'list_item', text: 'first item continued' },
      { kind: 'list_item', text: 'second item' },
      { kind: 'list_item', text: 'third item' },
      { kind: 'table_row', text: 'Name: Ann; Age: 31' },
      { kind: 'table_row', text: 'Name: Bob | Jr; Age: 40' },
      { kind: 'paragraph', text: 'const x = 1;\n\n# not a heading' },
      { kind: 'paragraph', text: 'quoted' },
      { kind: 'heading', text: 'Deep', level: 6 },
    ]);
  });

  it('reads a line longer than MAX_LINE_CHARS in pieces that read on as one, never splitting a character', () => {
    // No space to cut at, and an emoji across the first piece's limit.
    const line = `${'a'.repeat(MAX_LINE_CHARS - 1)}😀${'b'.repeat(MAX_PARAGRAPH_CHARS * 2)} [link](https://example.com) end`;
    const doc = parseText(utf8(`# Title\n\n${line}\n\nAfter.`), 'md');
    const walls = doc.blocks.slice(1, -1);
    expect(walls.length).toBeGreaterThan(2);
    expect(walls.every((b) => b.kind === 'paragraph' && b.text.length <= MAX_PARAGRAPH_CHARS + walls.length)).toBe(true);
    expect(walls[0]!.continues).toBeUndefined();
    expect(walls.slice(1).every((b) => b.continues)).toBe(true);
    expect(walls.some((b) => /\p{Cs}/u.test(b.text))).toBe(false);
    // Pieces cut where there was no space are joined by one, as the chunker joins them.
    const rejoined = walls.map((b) => b.text).join(' ');
    expect(rejoined.replaceAll(' ', '')).toBe(line.replace(' [link](https://example.com) ', 'link'));
    expect(doc.blocks.at(-1)).toEqual({ kind: 'paragraph', text: 'After.' });
  });
});

describe('parseDocument', () => {
  afterEach(() => {
    vi.doUnmock('../../../workers/ingest/src/parsers/csv.ts');
    vi.resetModules();
  });

  it.each(['pdf', 'docx', 'pptx', 'xlsx', 'csv', 'txt', 'md', 'html'] as const)('reports a 0-byte %s as empty', async (type) => {
    expect(await rejection(parseDocument(type, new Uint8Array(0)))).toMatchObject({
      reason: 'empty',
      message: 'The file is empty',
    });
  });

  it('dispatches by type', async () => {
    const csv = await parseDocument('csv', fixture('stanley-cups.csv'));
    expect(csv.blocks[1]?.text).toBe('Team: Blues; Location: STL; Stanley Cups: 1');
    const xlsx = await parseDocument('xlsx', fixture('vodafone-financials.xlsx'));
    expect(xlsx.blocks[0]).toMatchObject({ kind: 'heading', sheet: 'Index' });
    expect(await rejection(parseDocument('xlsx', fixture('password-protected.xlsx')))).toMatchObject({ reason: 'encrypted' });
    expect(await rejection(parseDocument('txt', Uint8Array.of(0, 1, 2, 3, 4)))).toMatchObject({ reason: 'corrupt' });
  });

  it('turns unexpected exceptions into a generic corrupt error', async () => {
    vi.resetModules();
    vi.doMock('../../../workers/ingest/src/parsers/csv.ts', () => ({
      parseCsv: () => {
        throw new TypeError("Cannot read properties of undefined (reading 'secret internals')");
      },
    }));
    const { parseDocument: fresh } = await import('../../../workers/ingest/src/parsers/index.ts');
    // The reloaded modules have their own ParseError class.
    const { ParseError: FreshParseError } = await import('../../../workers/ingest/src/parsers/types.ts');
    const error = await fresh('csv', utf8('a,b\n1,2\n')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FreshParseError);
    expect(error).toMatchObject({ reason: 'corrupt', message: 'The file could not be read: it may be corrupt' });
  });
});
