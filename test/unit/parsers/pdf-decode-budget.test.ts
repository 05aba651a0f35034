import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { parsePdf } from '../../../workers/ingest/src/parsers/pdf.ts';
import { decodeBudgetInstalled } from '../../../workers/ingest/src/parsers/pdf-decode-budget.ts';
import { DEFAULT_PARSE_LIMITS, type ParseLimits } from '../../../workers/ingest/src/parsers/types.ts';
import { readRange } from '../../../workers/ingest/src/pipeline/read-range.ts';
import {
  commentedFilterPdf,
  contentsArrayPdf,
  indirectFilterPdf,
  manyHeavyPagesPdf,
  nameEscapePdf,
  type PdfObject,
  pdfOf,
  rc4EncryptedPdf,
  showText,
  spaces,
} from '../../support/hostile-pdfs.ts';

/**
 * What pdf.js decompresses is counted inside pdf.js (workers/ingest/src/parsers/pdf-decode-budget.ts),
 * so the budget holds however a file hides its filters. The limits are lowered here so that small
 * files reach them; test/unit/hostile-files.test.ts runs the real files at the real limits.
 */

const MB = 1024 * 1024;
const limited = (decode: Partial<ParseLimits['decode']>): ParseLimits => ({
  ...DEFAULT_PARSE_LIMITS,
  decode: { ...DEFAULT_PARSE_LIMITS.decode, ...decode },
});
const flate = (content: string) => new Uint8Array(deflateSync(Buffer.from(content, 'latin1')));
const streamOf = (data: Uint8Array): PdfObject => ({ dict: `<< /Length ${data.length} /Filter /FlateDecode >>`, stream: data });

/** Two pages: the first fine, the second's content given. */
function twoPages(second: PdfObject[]): Uint8Array {
  const refs = second.map((_, i) => `${7 + i} 0 R`).join(' ');
  const font = '/Resources << /Font << /F1 6 0 R >> >>';
  return pdfOf([
    { dict: '<< /Type /Catalog /Pages 2 0 R >>' },
    { dict: '<< /Type /Pages /Count 2 /Kids [3 0 R 4 0 R] >>' },
    { dict: `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R ${font} >>` },
    { dict: `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents [${refs}] ${font} >>` },
    streamOf(flate(showText('The first page is fine.'))),
    { dict: '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>' },
    ...second,
  ]);
}

describe('what pdf.js decompresses, counted inside pdf.js', () => {
  it('reads the rest of a PDF whose one stream passes the stream budget, and says what was lost', async () => {
    const doc = await parsePdf(twoPages([streamOf(spaces(3))]), limited({ stream: MB }));
    expect(decodeBudgetInstalled()).toBe(true);
    expect(doc.blocks.map((b) => [b.text, b.page])).toEqual([['The first page is fine.', 1]]);
    expect(doc.warnings).toEqual(['1 compressed part of the PDF expands past 1 MB and was not read']);
  });

  it.each([
    ['a filter name written with an escape', nameEscapePdf],
    ['a filter given by reference', indirectFilterPdf],
    ['comments after /Filter and before stream', commentedFilterPdf],
    ['RC4 encryption with an empty user password', rc4EncryptedPdf],
  ])('holds for %s', async (_, build) => {
    // The unbounded decode of these is 3 MB; the budget stops each at 1 MB.
    const parse = parsePdf(build(3), limited({ stream: MB }));
    await expect(parse).rejects.toMatchObject({
      reason: 'too_large',
      message: 'The PDF could not be read: its content expands past 1 MB when decompressed',
    });
  });

  it('holds a page to its budget however many streams its content is split into', async () => {
    // Eight content streams of 1 MB, each within the stream budget; the page may decode 4 MB.
    const doc = await parsePdf(twoPages(Array.from({ length: 8 }, () => streamOf(spaces(1)))), limited({ page: 4 * MB }));
    expect(doc.blocks.map((b) => b.page)).toEqual([1]);
    expect(doc.warnings).toEqual(['Page 2 expands past 4 MB when decompressed; only part of it was read']);
    await expect(parsePdf(contentsArrayPdf(8, 1), limited({ page: 4 * MB }))).rejects.toMatchObject({
      message: 'The PDF could not be read: its content expands past 4 MB when decompressed',
    });
  });

  it('ends a step once it has decoded its share, and the next step reads on from the next page', async () => {
    // Six pages of 1 MB each, decoded twice (text, then operators): a step's share of 5 MB is spent on page 3.
    const file = manyHeavyPagesPdf(6, 1);
    const limits = limited({ step: 5 * MB });
    const first = await readRange({ type: 'pdf', bytes: file, chunkSize: 1000 }, undefined, limits);
    expect(first).toMatchObject({ lastPage: 3, extracted: false, warnings: [] });
    expect(first.decodedBytes).toBeGreaterThanOrEqual(5 * MB);
    const second = await readRange(
      {
        type: 'pdf',
        bytes: file,
        chunkSize: 1000,
        fromPage: 4,
        before: { chunks: 1, images: 0, decodedBytes: first.decodedBytes },
      },
      undefined,
      limits,
    );
    expect(second).toMatchObject({ lastPage: 6, extracted: true, warnings: [] });
  });

  it("empties pdf.js's caches once a page's worth has been decoded, and reads every page on", async () => {
    // Each page decodes about 2 MB (text, then operators): the caches are emptied every other page.
    const doc = await parsePdf(manyHeavyPagesPdf(6, 1), limited({ page: 3 * MB }));
    expect(doc.warnings).toEqual([]);
    expect(doc.blocks.map((b) => [b.text, b.page])).toEqual([1, 2, 3, 4, 5, 6].map((page) => ['Text before the bomb.', page]));
  });

  it('stops the document once it has decoded its budget over all its steps', async () => {
    const file = manyHeavyPagesPdf(6, 1);
    const limits = limited({ document: 7 * MB });
    const first = await readRange({ type: 'pdf', bytes: file, chunkSize: 1000 }, undefined, limits);
    expect(first).toMatchObject({ extracted: true });
    expect(first.lastPage).toBeLessThan(6);
    expect(first.warnings).toEqual(['The PDF expands past 7 MB when decompressed; the pages after that point were not read']);
    // What earlier steps decoded counts: a step that starts with the budget spent reads nothing.
    const spent = await readRange(
      { type: 'pdf', bytes: file, chunkSize: 1000, fromPage: 4, before: { chunks: 1, images: 0, decodedBytes: 7 * MB } },
      undefined,
      limits,
    );
    expect(spent).toMatchObject({ chunks: [], extracted: true });
  });

  it('charges each of two documents parsed at once to its own budget', async () => {
    const [bomb, fine] = await Promise.allSettled([
      parsePdf(nameEscapePdf(3), limited({ stream: MB })),
      parsePdf(twoPages([streamOf(flate(showText('Page two.')))]), limited({ stream: MB })),
    ]);
    expect(bomb).toMatchObject({ status: 'rejected', reason: { reason: 'too_large' } });
    expect(fine).toMatchObject({ status: 'fulfilled', value: { warnings: [] } });
    if (fine.status === 'fulfilled')
      expect(fine.value.blocks.map((b) => b.text)).toEqual(['The first page is fine.', 'Page two.']);
  });
});
