import { describe, expect, it } from 'vitest';
import { parseDocument } from '../../../workers/ingest/src/parsers/index.ts';
import { fixture } from '../../support/documents.ts';
import { epubBook } from '../../support/hostile-files.ts';

describe('EPUB', () => {
  it('reads the chapters in spine order with their headings, leaving out the non-linear cover', async () => {
    const doc = await parseDocument('epub', fixture('tika-two-chapters.epub'));
    const headings = doc.blocks.filter((block) => block.kind === 'heading').map((block) => [block.text, block.level]);
    expect(headings).toEqual([
      ['Table of Contents', 3],
      ['Chapter 1', 1],
      ['Chapter 2', 1],
      ['Subchapter 2.1', 2],
      ['Subchapter 2.2', 2],
    ]);
    const text = doc.blocks.map((block) => block.text).join('\n');
    expect(text.indexOf('This is the text for chapter One')).toBeLessThan(text.indexOf('This is the text for chapter Two'));
    expect(doc.blocks).toContainEqual({ kind: 'list_item', text: 'Second item' });
    expect(doc.blocks).toContainEqual({ kind: 'table_row', text: 'Table header; Table data' });
    // The chapters' <style> and <script> are not text.
    expect(text).not.toMatch(/nothing to see here|nor here/);
    expect(doc).toMatchObject({ title: 'An ePub for Tika', date: '2009-10-07' });
  });

  it('follows the spine, not the manifest or the file order', async () => {
    const book = epubBook(['<h1>First</h1>', '<h1>Second</h1>']);
    const doc = await parseDocument('epub', book);
    expect(doc.blocks.map((block) => block.text)).toEqual(['First', 'Second']);
  });

  it('refuses a package that is not an EPUB', async () => {
    await expect(parseDocument('epub', fixture('tika-features.odt'))).rejects.toThrow(/not a valid EPUB/);
  });
});
