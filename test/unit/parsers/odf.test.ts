import { describe, expect, it } from 'vitest';
import { parseDocument } from '../../../workers/ingest/src/parsers/index.ts';
import { fixture } from '../../support/documents.ts';
import { odfDocument } from '../../support/hostile-files.ts';

const texts = (blocks: { text: string }[]) => blocks.map((block) => block.text);

describe('OpenDocument text', () => {
  it('reads headings, paragraphs and lists, without comments, footnotes or deleted text', async () => {
    const doc = await parseDocument('odt', fixture('tika-features.odt'));
    expect(doc.blocks[0]).toEqual({ kind: 'heading', text: 'Apache Tika Test Document', level: 1 });
    expect(doc.blocks[1]).toEqual({
      kind: 'paragraph',
      text: 'This is a rather difficult test document, with interesting features.',
    });
    expect(doc.blocks.filter((block) => block.kind === 'list_item').map((block) => block.text)).toEqual([
      'First item',
      'Second item',
      'Third item',
    ]);
    const all = texts(doc.blocks).join('\n');
    expect(all).not.toContain('Tika is part of the Lucene project');
    expect(all).not.toContain('simple footnote');
    expect(all).not.toContain('complex');
    expect(doc).toMatchObject({ title: 'Apache Tika', date: '2009-10-05' });
  });

  it('reads a table as rows named by its header', async () => {
    const doc = await parseDocument('odt', fixture('odt-table.odt'));
    expect(doc.blocks).toContainEqual({ kind: 'table_row', text: 'Header row: Leader; Mon: Sarah; Wed: Mark; Fri: Ryan' });
  });

  it('keeps a space between spans, and reads text:s as spaces', async () => {
    const doc = await parseDocument(
      'odt',
      odfDocument(
        'text',
        '<office:text><text:p><text:span>tidal</text:span> <text:span>range</text:span>:<text:s text:c="2"/>4 m</text:p></office:text>',
      ),
    );
    expect(texts(doc.blocks)).toEqual(['tidal range: 4 m']);
  });

  it('refuses an encrypted document', async () => {
    await expect(parseDocument('odt', fixture('password-protected.odt'))).rejects.toThrow(/password-protected/);
  });

  it('names the kind a package really is', async () => {
    await expect(parseDocument('odt', fixture('columnar.ods'))).rejects.toThrow(
      /is an OpenDocument spreadsheet, not an OpenDocument text/,
    );
  });
});

describe('OpenDocument spreadsheet', () => {
  it('reads each sheet under its name, each row named by the header', async () => {
    const doc = await parseDocument('ods', fixture('columnar.ods'));
    expect(doc.blocks[0]).toEqual({ kind: 'heading', text: 'testing', level: 1, page: 1, sheet: 'testing' });
    expect(doc.blocks).toContainEqual({
      kind: 'table_row',
      text: 'Record Number: 3; Square of the Record Number: 9; Description of the Row: This is row 3 of 10; Percent Done: 30%; Percent Increment: 66.7%; date: 22-03-1960; datetime: 01Jan60:00:16:40; time: 00:00',
      page: 1,
      sheet: 'testing',
    });
    expect(doc.pageCount).toBe(1);
  });
});

describe('OpenDocument presentation', () => {
  it('reads each slide as a page, its title a heading', async () => {
    const doc = await parseDocument('odp', fixture('impress-two-slides.odp'));
    expect(doc.blocks).toEqual([
      { kind: 'heading', text: 'This is', level: 1, page: 1 },
      { kind: 'paragraph', text: 'An example Impress file', page: 1 },
    ]);
    expect(doc.pageCount).toBe(2);
  });
});
