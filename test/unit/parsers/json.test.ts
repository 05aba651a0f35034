import { describe, expect, it } from 'vitest';
import { chunkBlocks } from '../../../workers/ingest/src/chunking/chunk-blocks.ts';
import { parseDocument } from '../../../workers/ingest/src/parsers/index.ts';
import { MAX_JSON_BYTES, MAX_RECORD_CHARS } from '../../../workers/ingest/src/parsers/json.ts';
import { fixture } from '../../support/documents.ts';

const encode = (value: unknown) => new TextEncoder().encode(typeof value === 'string' ? value : JSON.stringify(value, null, 2));

describe('JSON', () => {
  it('reads each record of an array as one block of field paths and values', async () => {
    const doc = await parseDocument('json', fixture('unstructured-elements.json'));
    expect(doc.blocks.every((block) => block.kind === 'paragraph')).toBe(true);
    expect(doc.blocks[0]?.text).toContain('metadata.filename: simple.docx');
    expect(doc.blocks[0]?.text).toContain('text: These are a few of my favorite things:; type: Title');
    expect(doc.blocks.some((block) => block.text.includes('text: Parrots; type: ListItem'))).toBe(true);
  });

  it('keeps every record whole in its chunk', async () => {
    const doc = await parseDocument('json', fixture('unstructured-elements.json'));
    const chunks = chunkBlocks(doc.blocks, { chunkSize: 1000 });
    for (const block of doc.blocks) expect(chunks.some((chunk) => chunk.text.includes(block.text))).toBe(true);
  });

  it('puts nested objects under headings named by their field paths', async () => {
    const doc = await parseDocument(
      'json',
      encode({
        name: 'Harbour survey',
        site: { location: { lat: 51.5, lon: -0.1 }, tides: ['spring', 'neap'] },
        readings: [
          { at: '06:00', height: 4.2 },
          { at: '12:00', height: 0.8 },
        ],
      }),
    );
    expect(doc.blocks).toEqual([
      { kind: 'paragraph', text: 'name: Harbour survey' },
      { kind: 'heading', text: 'site', level: 1 },
      { kind: 'paragraph', text: 'tides: spring, neap' },
      { kind: 'heading', text: 'site.location', level: 2 },
      { kind: 'paragraph', text: 'lat: 51.5' },
      { kind: 'paragraph', text: 'lon: -0.1' },
      { kind: 'heading', text: 'readings', level: 1 },
      { kind: 'paragraph', text: 'at: 06:00; height: 4.2' },
      { kind: 'paragraph', text: 'at: 12:00; height: 0.8' },
    ]);
  });

  it('reads a record too long for one block field by field under its own path', async () => {
    const long = { id: 7, body: { summary: 'x '.repeat(MAX_RECORD_CHARS), author: 'Ada' } };
    const doc = await parseDocument('json', encode([long]));
    expect(doc.blocks[0]).toEqual({ kind: 'heading', text: '[0]', level: 1 });
    expect(doc.blocks.map((block) => block.text)).toContain('author: Ada');
  });

  it('refuses JSON nested deeper than 64 levels, and text that is not JSON', async () => {
    await expect(parseDocument('json', encode(`${'['.repeat(100_000)}${']'.repeat(100_000)}`))).rejects.toThrow(
      /nested more than 64 levels/,
    );
    await expect(parseDocument('json', encode('{"a": 1,}'))).rejects.toThrow(/not valid JSON/);
    await expect(parseDocument('json', new Uint8Array(MAX_JSON_BYTES + 1).fill(32))).rejects.toThrow(/JSON Lines/);
  });
});

describe('JSON Lines', () => {
  it('reads each line as one record', async () => {
    const doc = await parseDocument('jsonl', fixture('unstructured-elements.jsonl'));
    const json = await parseDocument('json', fixture('unstructured-elements.json'));
    expect(doc.blocks).toEqual(json.blocks);
    expect(doc.warnings).toEqual([]);
  });

  it('skips lines that are not JSON, saying how many', async () => {
    const doc = await parseDocument('jsonl', encode('{"a": 1}\nnot json\n{"b": 2}\n\n[1, 2]\n'));
    expect(doc.blocks.map((block) => block.text)).toEqual(['a: 1', 'b: 2', '1, 2']);
    expect(doc.warnings).toEqual(['1 line was not valid JSON and was skipped']);
  });
});
