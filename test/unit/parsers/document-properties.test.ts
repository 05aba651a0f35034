/**
 * A document's title and date, per format (issue 22: passages that know their document): what the file says
 * of itself where its format has a place for it, the first heading where it has none, and nothing made up.
 */
import { strToU8 } from 'fflate';
import { describe, expect, it } from 'vitest';
import { cleanTitle, isoDate } from '../../../workers/ingest/src/parsers/document-properties.ts';
import { parseDocx } from '../../../workers/ingest/src/parsers/docx.ts';
import { parseHtml } from '../../../workers/ingest/src/parsers/html.ts';
import { parsePdf } from '../../../workers/ingest/src/parsers/pdf.ts';
import { parsePptx } from '../../../workers/ingest/src/parsers/pptx.ts';
import { parseXlsx } from '../../../workers/ingest/src/parsers/xlsx.ts';
import { readRange } from '../../../workers/ingest/src/pipeline/read-range.ts';
import { fixture } from '../../support/documents.ts';
import { pdfOf, showText } from '../../support/hostile-pdfs.ts';
import { docx, NS, pack, rels } from '../../support/ooxml-files.ts';

const CORE_TYPE = 'http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties';

function core(title: string, created: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?><cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><dc:title>${title}</dc:title><dcterms:created xsi:type="dcterms:W3CDTF">${created}</dcterms:created></cp:coreProperties>`;
}

/** The package relationship to the core properties, as Office writes it (beside the main part's). */
function packageRels(main: string): string {
  return `<Relationships xmlns="${NS.rel}"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="${main}"/><Relationship Id="rId2" Type="${CORE_TYPE}" Target="docProps/core.xml"/></Relationships>`;
}

const paragraph = (text: string) => `<w:p><w:r><w:t>${text}</w:t></w:r></w:p>`;

/** A one-page PDF showing `words`, with `info` as its Info dictionary (none when null). */
function pdf(words: string, info: string | null): Uint8Array {
  const objects = [
    { dict: '<< /Type /Catalog /Pages 2 0 R >>' },
    { dict: '<< /Type /Pages /Count 1 /Kids [3 0 R] >>' },
    { dict: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>' },
    { dict: `<< /Length ${showText(words).length} >>`, stream: strToU8(showText(words)) },
    { dict: '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>' },
    ...(info === null ? [] : [{ dict: info }]),
  ];
  return pdfOf(objects, info === null ? '' : '/Info 6 0 R ');
}

describe('title and date of a file', () => {
  it('a PDF: its Info /Title and /CreationDate', async () => {
    const doc = await parsePdf(
      pdf('Net sales rose.', "<< /Title (Acme Corp Quarterly Report Q3 2024) /CreationDate (D:20241030093000-04'00') >>"),
    );
    expect(doc.title).toBe('Acme Corp Quarterly Report Q3 2024');
    expect(doc.date).toBe('2024-10-30');
  });

  it('a PDF whose /Title is an identifier or a file name has no title; one without Info has neither', async () => {
    const edgar = await parsePdf(pdf('Net sales rose.', '<< /Title (0000320193-22-000070) /ModDate (D:20220729) >>'));
    expect(edgar.title).toBeUndefined();
    expect(edgar.date).toBe('2022-07-29');
    expect((await parsePdf(pdf('Text.', '<< /Title (report-final.pdf) >>'))).title).toBeUndefined();
    const bare = await parsePdf(pdf('Text.', null));
    expect(bare.title).toBeUndefined();
    expect(bare.date).toBeUndefined();
  });

  it('a Word document: docProps/core.xml, found through the package relationship or at its usual path', () => {
    const viaRel = parseDocx(
      docx(paragraph('Body text.'), {
        parts: {
          '_rels/.rels': packageRels('word/document.xml'),
          'docProps/core.xml': core('Staff Handbook 2025', '2025-01-15T08:00:00Z'),
        },
      }),
    );
    expect(viaRel).toMatchObject({ title: 'Staff Handbook 2025', date: '2025-01-15' });
    const usualPath = parseDocx(
      docx(paragraph('Body text.'), { parts: { 'docProps/core.xml': core('Minutes, 3 March', '2024-03-03') } }),
    );
    expect(usualPath).toMatchObject({ title: 'Minutes, 3 March', date: '2024-03-03' });
  });

  it('an Office file with an empty or placeholder title has none; the shipped fixtures have empty core properties', () => {
    expect(
      parseDocx(docx(paragraph('x'), { parts: { 'docProps/core.xml': core('Untitled', 'not a date') } })),
    ).not.toHaveProperty('title');
    const handbook = parseDocx(fixture('handbook-1p.docx'));
    expect(handbook.title).toBeUndefined();
    expect(handbook.date).toBeUndefined();
  });

  it('a PowerPoint and an Excel file: their core properties too', () => {
    const slide = `<p:sld xmlns:p="${NS.p}" xmlns:a="${NS.a}"><p:cSld><p:spTree><p:sp><p:txBody><a:p><a:r><a:t>Roadmap</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>`;
    const pptx = pack('pptx', 'ppt/presentation.xml', {
      'ppt/presentation.xml': `<p:presentation xmlns:p="${NS.p}" xmlns:r="${NS.r}"><p:sldIdLst><p:sldId id="256" r:id="rId2"/></p:sldIdLst></p:presentation>`,
      'ppt/_rels/presentation.xml.rels': rels([['rId2', 'slide', 'slides/slide1.xml']]),
      'ppt/slides/slide1.xml': slide,
      'docProps/core.xml': core('Product Roadmap FY26', '2025-06-02T10:00:00Z'),
    });
    expect(parsePptx(pptx)).toMatchObject({ title: 'Product Roadmap FY26', date: '2025-06-02' });
    const book = pack('xlsx', 'xl/workbook.xml', {
      'xl/workbook.xml': `<workbook xmlns="${NS.x}" xmlns:r="${NS.r}"><sheets><sheet name="Plan" sheetId="1" r:id="rIdS0"/></sheets></workbook>`,
      'xl/_rels/workbook.xml.rels': rels([['rIdS0', 'worksheet', 'worksheets/sheet1.xml']]),
      'xl/worksheets/sheet1.xml': `<worksheet xmlns="${NS.x}"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>Revenue</t></is></c></row></sheetData></worksheet>`,
      'docProps/core.xml': core('Budget 2026', '2025-11-20T00:00:00Z'),
    });
    expect(parseXlsx(book)).toMatchObject({ title: 'Budget 2026', date: '2025-11-20' });
  });

  it('a web page: its <title>, and no date', () => {
    const page =
      '<html><head><title>Tidal power explained</title></head><body><p>A barrage holds the tide back.</p></body></html>';
    const doc = parseHtml(new TextEncoder().encode(page), 'text/html; charset=utf-8', 'https://example.com/tides');
    expect(doc.title).toBe('Tidal power explained');
    expect(doc.date).toBeUndefined();
  });

  it('without a title of its own, the first range takes the first heading (a Markdown file’s first #), else none', async () => {
    const md = await readRange({
      type: 'md',
      bytes: strToU8('Intro line.\n\n# Field Guide to Ferns\n\n## Spores\n\nText.'),
      chunkSize: 800,
    });
    expect(md.context).toEqual({ title: 'Field Guide to Ferns', document_date: null });
    const txt = await readRange({ type: 'txt', bytes: strToU8('Just text, no headings.'), chunkSize: 800 });
    expect(txt.context).toEqual({ title: null, document_date: null });
    // The file's own title wins over its first heading.
    const own = await readRange({
      type: 'pdf',
      bytes: pdf('Body.', '<< /Title (Annual Report 2023) /CreationDate (D:20240301) >>'),
      chunkSize: 800,
    });
    expect(own.context).toEqual({ title: 'Annual Report 2023', document_date: '2024-03-01' });
    // A later PDF range says nothing: the first one decided.
    expect((await readRange({ type: 'pdf', bytes: pdf('Body.', null), chunkSize: 800, fromPage: 2 })).context).toBeUndefined();
  });
});

describe('cleanTitle and isoDate', () => {
  it('keeps a title on one line, within 200 characters, and refuses placeholders', () => {
    expect(cleanTitle('  Quarterly\n report \u0000 Q3 ')).toBe('Quarterly report Q3');
    expect(cleanTitle('Microsoft Word - draft.docx')).toBeUndefined();
    expect(cleanTitle('Presentation1')).toBeUndefined();
    expect(cleanTitle(42)).toBeUndefined();
    const long = cleanTitle('word '.repeat(100)) as string;
    expect(long.length).toBe(200);
    expect(long.endsWith('…')).toBe(true);
  });

  it('reads PDF and ISO dates, and refuses days that do not exist', () => {
    expect(isoDate("D:20230427093000-04'00'")).toBe('2023-04-27');
    expect(isoDate('2023-04-27T09:30:00Z')).toBe('2023-04-27');
    expect(isoDate('D:20230231')).toBeUndefined();
    expect(isoDate('April 2023')).toBeUndefined();
    expect(isoDate(undefined)).toBeUndefined();
  });
});
