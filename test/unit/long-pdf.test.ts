import { describe, expect, it } from 'vitest';
import { parsePdf } from '../../workers/ingest/src/parsers/pdf.ts';
import { longPdf } from '../support/long-pdf.ts';

// bench/web/citation-open.ts aims a question at page 73 of this document: ingestion must read its pages as drawn.
describe('the long test PDF', () => {
  it('parses into 100 pages, each under its chapter heading, with the planted fact on its page', async () => {
    const pdf = longPdf();
    const parsed = await parsePdf(pdf.bytes);
    expect(parsed.pageCount).toBe(100);
    const headings = parsed.blocks.filter((block) => block.kind === 'heading');
    expect(headings.map((block) => block.page)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(headings[72]?.text).toBe(pdf.pages[72]?.[0]);
    const fact = parsed.blocks.filter((block) => block.text.includes('Kestrel Point'));
    expect(fact.map((block) => block.page)).toEqual([pdf.fact.page]);
    expect(fact[0]?.text.replace(/\s+/g, ' ')).toContain(pdf.fact.sentence);
  });

  it('is the same document for the same seed, and another for another', () => {
    expect(longPdf().bytes).toEqual(longPdf().bytes);
    expect(longPdf(100, 2).pages[10]).not.toEqual(longPdf().pages[10]);
  });
});
