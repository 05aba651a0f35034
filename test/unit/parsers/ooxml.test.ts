import { strToU8, zipSync } from 'fflate';
import { encode as encodeJpeg } from 'jpeg-js';
import { describe, expect, it } from 'vitest';
import { parseDocx } from '../../../workers/ingest/src/parsers/docx.ts';
import { encodePng } from '../../../workers/ingest/src/parsers/png.ts';
import { parsePptx } from '../../../workers/ingest/src/parsers/pptx.ts';
import { type Block, DEFAULT_PARSE_LIMITS, type ParsedDocument } from '../../../workers/ingest/src/parsers/types.ts';
import { formatKind, formatNumber, MAX_CELLS, parseXlsx } from '../../../workers/ingest/src/parsers/xlsx.ts';
import { fixture } from '../../support/documents.ts';
import { docx, NS, pack, rels, xlsx } from '../../support/ooxml-files.ts';
import { failure } from '../../support/parsing.ts';

function png(width: number, height: number): Uint8Array {
  return encodePng(new Uint8Array(width * height * 3).fill(200), width, height, 3);
}

/** Just enough of a JPEG for its size to be read: SOI, then a baseline frame header. */
function jpegHeader(width: number, height: number): Uint8Array {
  return Uint8Array.of(
    0xff,
    0xd8,
    0xff,
    0xc0,
    0x00,
    0x11,
    0x08,
    height >> 8,
    height & 0xff,
    width >> 8,
    width & 0xff,
    3,
    1,
    0x22,
    0,
    2,
    0x11,
    1,
    3,
    0x11,
    1,
  );
}

const texts = (doc: ParsedDocument, kind?: Block['kind']) =>
  doc.blocks.filter((b) => !kind || b.kind === kind).map((b) => b.text);

// ---------------------------------------------------------------------------------------------

const p = (text: string, props = '') =>
  `<w:p>${props ? `<w:pPr>${props}</w:pPr>` : ''}<w:r><w:t xml:space="preserve">${text}</w:t></w:r></w:p>`;
const styled = (style: string, text: string) => p(text, `<w:pStyle w:val="${style}"/>`);
const cell = (text: string, props = '') => `<w:tc>${props ? `<w:tcPr>${props}</w:tcPr>` : ''}${p(text)}</w:tc>`;
const image = (rId: string) =>
  `<w:p><w:r><w:drawing><wp:inline xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"><a:graphic xmlns:a="${NS.a}"><a:graphicData><pic:pic xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:blipFill><a:blip r:embed="${rId}"/></pic:blipFill></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>`;

describe('parseDocx', () => {
  it('reads the handbook fixture with its hand-made headings', () => {
    const doc = parseDocx(fixture('handbook-1p.docx'));
    expect(doc.blocks.slice(0, 2)).toMatchObject([
      { kind: 'heading', text: 'CHAPTER 1', level: 1 },
      { kind: 'heading', text: 'INTRODUCTION', level: 1 },
    ]);
    const body = texts(doc, 'paragraph').join('\n');
    expect(body).toContain('The United States Trustee appoints and supervises standing trustees');
    expect(body).toContain('C. STATUTORY DUTIES OF A STANDING TRUSTEE');
    expect(doc.warnings).toEqual([]);
  });

  it('keeps header context in the rows of the tables fixture, merged cells included', () => {
    const rows = texts(parseDocx(fixture('docx-tables.docx')), 'table_row');
    expect(rows).toContain('Header Col 1: Lorem ipsum; Header Col 2: A link example');
    // Entities decoded, nested table flattened into its cell.
    expect(rows).toContain('a: d; >b<: e f g&t h; c: i');
    // vMerge continues "a" (a header, so not repeated as a value) and "d"; "e" spans two columns once.
    expect(rows).toContain('b: c; b: d');
    expect(rows).toContain('a: e; b: d');
  });

  it('takes heading levels from style names, not style ids, and finds list items', () => {
    const doc = docx(
      styled('Titel', 'The Title') +
        styled('berschrift1', 'Chapter One') +
        p('Body text.') +
        styled('MyChapter', 'Inherited level') +
        p('Outlined', '<w:outlineLvl w:val="2"/>') +
        p('Numbered item', '<w:numPr><w:ilvl w:val="0"/><w:numId w:val="3"/></w:numPr>') +
        styled('Aufzhlung', 'Bullet by style') +
        p('Not numbered', '<w:numPr><w:numId w:val="0"/></w:numPr>'),
    );
    expect(parseDocx(doc).blocks).toEqual([
      { kind: 'heading', text: 'The Title', level: 1 },
      { kind: 'heading', text: 'Chapter One', level: 1 },
      { kind: 'paragraph', text: 'Body text.' },
      { kind: 'heading', text: 'Inherited level', level: 2 },
      { kind: 'heading', text: 'Outlined', level: 3 },
      { kind: 'list_item', text: 'Numbered item' },
      { kind: 'list_item', text: 'Bullet by style' },
      { kind: 'paragraph', text: 'Not numbered' },
    ]);
  });

  it('numbers pages from page breaks', () => {
    const doc = parseDocx(
      docx(
        `${p('First page')}<w:p><w:r><w:br w:type="page"/></w:r></w:p>${p('Second page')}${p('Third page', '<w:pageBreakBefore/>')}`,
      ),
    );
    expect(doc.blocks.map((b) => [b.text, b.page])).toEqual([
      ['First page', 1],
      ['Second page', 2],
      ['Third page', 3],
    ]);
    expect(doc.pageCount).toBe(3);
  });

  it('repeats vertically merged cells, names spanned columns, and pages rows by rendered breaks', () => {
    const table =
      '<w:tbl>' +
      `<w:tr>${cell('Name')}${cell('Contact', '<w:gridSpan w:val="2"/>')}</w:tr>` +
      `<w:tr>${cell('Ann', '<w:vMerge w:val="restart"/>')}${cell('phone')}${cell('555')}</w:tr>` +
      `<w:tr>${cell('', '<w:vMerge/>')}<w:tc><w:p><w:r><w:lastRenderedPageBreak/><w:t>email</w:t></w:r></w:p></w:tc>${cell('ann@example.com')}</w:tr>` +
      '</w:tbl>';
    const doc = parseDocx(docx(p('Before') + table + p('After')));
    expect(doc.blocks).toEqual([
      { kind: 'paragraph', text: 'Before', page: 1 },
      { kind: 'table_row', text: 'Name: Ann; Contact: phone; Contact: 555', page: 1 },
      { kind: 'table_row', text: 'Name: Ann; Contact: email; Contact: ann@example.com', page: 2 },
      { kind: 'paragraph', text: 'After', page: 2 },
    ]);
    expect(doc.pageCount).toBe(2);
  });

  it('skips deleted text and takes one branch of alternate content', () => {
    const body =
      `<w:p><w:r><w:t>Kept</w:t></w:r><w:del><w:r><w:delText>Deleted</w:delText></w:r></w:del><w:ins><w:r><w:t xml:space="preserve"> inserted</w:t></w:r></w:ins></w:p>` +
      `<w:p><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><w:txbxContent>${p('Textbox words')}</w:txbxContent></w:drawing></mc:Choice><mc:Fallback><w:pict><w:txbxContent>${p('Textbox words')}</w:txbxContent></w:pict></mc:Fallback></mc:AlternateContent></w:r></w:p>`;
    expect(texts(parseDocx(docx(body)))).toEqual(['Kept inserted', 'Textbox words']);
  });

  it('extracts PNG and JPEG figures above the size floor, as PNG, and reports what it cannot describe', () => {
    const pixels = new Uint8Array(100 * 80 * 4).map((_, i) => (i % 4 === 3 ? 255 : (i * 7) % 256));
    const photo = new Uint8Array(encodeJpeg({ data: pixels, width: 100, height: 80 }, 90).data);
    const doc = parseDocx(
      docx(image('rIdBig') + image('rIdTiny') + image('rIdPhoto') + image('rIdBroken') + image('rIdBig') + p('Caption'), {
        rels: [
          ['rIdBig', 'image', 'media/chart.png'],
          ['rIdTiny', 'image', 'media/icon.png'],
          ['rIdPhoto', 'image', 'media/photo.jpeg'],
          ['rIdBroken', 'image', 'media/broken.jpeg'],
        ],
        parts: {
          'word/media/chart.png': png(120, 90),
          'word/media/icon.png': png(16, 16),
          'word/media/photo.jpeg': photo,
          'word/media/broken.jpeg': jpegHeader(800, 600),
        },
      }),
    );
    expect(doc.images).toHaveLength(2);
    expect(doc.images[0]).toMatchObject({ width: 120, height: 90, origin: 'figure' });
    expect(doc.images[1]).toMatchObject({ width: 100, height: 80, origin: 'figure' });
    for (const figure of doc.images) expect([...figure.bytes.subarray(1, 4)]).toEqual([0x50, 0x4e, 0x47]);
    expect(doc.warnings).toEqual(['1 image was not described: only PNG and JPEG images can be read from Office files']);
    expect(texts(doc)).toEqual(['Caption']);
  });

  it('honours maxImages', () => {
    const parts: Record<string, Uint8Array> = {};
    const relList: [string, string, string][] = [];
    let body = '';
    for (let i = 0; i < 4; i++) {
      parts[`word/media/i${i}.png`] = png(70 + i, 70);
      relList.push([`rIdI${i}`, 'image', `media/i${i}.png`]);
      body += image(`rIdI${i}`);
    }
    const doc = parseDocx(docx(body + p('x'), { parts, rels: relList }), { ...DEFAULT_PARSE_LIMITS, maxImages: 2 });
    expect(doc.images.map((i) => i.width)).toEqual([70, 71]);
    expect(doc.warnings).toEqual(['2 more images were not described (at most 2 per document)']);
  });

  it('refuses XML with a DTD or entity declarations', () => {
    const bomb = '<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>';
    const error = failure(() => parseDocx(docx(p('&lol2;'), { prolog: bomb })));
    expect(error.reason).toBe('unsafe');
    expect(error.message).toBe('The document contains XML DTD/entity declarations, which are refused for safety');
    const external = '<!DOCTYPE d [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>';
    expect(failure(() => parseDocx(docx(p('&xxe;'), { prolog: external }))).reason).toBe('unsafe');
  });

  it('decodes only the predefined and numeric entities', () => {
    expect(texts(parseDocx(docx(p('a &lt;b&gt; &amp; &quot;c&quot; &#233;&#x20AC; &unknown;'))))).toEqual([
      'a <b> & "c" é€ &unknown;',
    ]);
  });

  it('refuses encrypted and legacy documents, and packages of another kind', () => {
    const encrypted = failure(() => parseDocx(fixture('password-protected.xlsx')));
    expect([encrypted.reason, encrypted.message]).toEqual(['encrypted', 'The document is password-protected']);
    const legacy = new Uint8Array(4096);
    legacy.set([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
    expect(failure(() => parseDocx(legacy))).toMatchObject({
      reason: 'unsupported',
      message: expect.stringMatching(/Legacy binary Office/),
    });
    expect(failure(() => parseDocx(fixture('pptx-table.pptx')))).toMatchObject({
      reason: 'unsupported',
      message: 'The file is a PowerPoint presentation, not a Word document',
    });
    expect(failure(() => parseDocx(zipSync({ 'a.txt': strToU8('x') }))).reason).toBe('corrupt');
  });

  it('reports malformed XML as corrupt', () => {
    const broken = pack('docx', 'word/document.xml', {
      'word/document.xml': `<w:document xmlns:w="${NS.w}"><w:body><w:p></w:body>`,
    });
    expect(failure(() => parseDocx(broken)).reason).toBe('corrupt');
  });
});

// ---------------------------------------------------------------------------------------------

describe('parsePptx', () => {
  it('reads slides in order with titles, bullets and tables', () => {
    const doc = parsePptx(fixture('sample-presentation-4slides.pptx'));
    expect(doc.pageCount).toBe(4);
    expect(doc.blocks.filter((b) => b.kind === 'heading')).toEqual([
      { kind: 'heading', text: 'Title Slide', level: 1, page: 1 },
      { kind: 'heading', text: 'This is the first content slide', level: 1, page: 2 },
      { kind: 'heading', text: 'This is the second content slide', level: 1, page: 3 },
      { kind: 'heading', text: 'This is kinda backwards, huh?', level: 1, page: 4 },
    ]);
    expect(doc.blocks).toContainEqual({ kind: 'list_item', text: 'This one is a sub-sub-bullet', page: 2 });
    expect(doc.blocks).toContainEqual({ kind: 'paragraph', text: 'What happens when there’s 2', page: 3 });
    expect(doc.blocks).toContainEqual({ kind: 'table_row', text: 'Table: 1; A: A1; B: B1; C: C1', page: 4 });
    // The title leads its slide even where the shape tree lists it later.
    const slide4 = doc.blocks.filter((b) => b.page === 4);
    expect(slide4[0]?.kind).toBe('heading');
  });

  it('keeps the header in table rows', () => {
    const doc = parsePptx(fixture('pptx-table.pptx'));
    expect(texts(doc)).toEqual([
      'A Slide with a Table',
      'Column 1: Red; Column 2: Green; Column 3: Blue',
      'Column 1: Purple; Column 2: Orange; Column 3: Yellow',
      'Column 1: Tangerine; Column 2: Pink; Column 3: Aqua',
    ]);
    expect(doc.blocks.every((b) => b.page === 1)).toBe(true);
  });

  it('follows sldIdLst order, reads notes and pictures with their slide number', () => {
    const slide = (title: string, extra = '') =>
      `<p:sld xmlns:p="${NS.p}" xmlns:a="${NS.a}" xmlns:r="${NS.r}"><p:cSld><p:spTree>` +
      `<p:sp><p:nvSpPr><p:nvPr><p:ph type="sldNum"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>7</a:t></a:r></a:p></p:txBody></p:sp>` +
      `<p:sp><p:nvSpPr><p:nvPr><p:ph type="title"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>${title}</a:t></a:r></a:p></p:txBody></p:sp>${extra}</p:spTree></p:cSld></p:sld>`;
    const pic = `<p:pic><p:blipFill><a:blip r:embed="rIdImg"/></p:blipFill></p:pic>`;
    const notes = `<p:notes xmlns:p="${NS.p}" xmlns:a="${NS.a}"><p:cSld><p:spTree><p:sp><p:nvSpPr><p:nvPr><p:ph type="body" idx="1"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>Say hello</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:notes>`;
    const file = pack('pptx', 'ppt/presentation.xml', {
      'ppt/presentation.xml': `<p:presentation xmlns:p="${NS.p}" xmlns:r="${NS.r}"><p:sldIdLst><p:sldId id="256" r:id="rId2"/><p:sldId id="257" r:id="rId1"/></p:sldIdLst></p:presentation>`,
      'ppt/_rels/presentation.xml.rels': rels([
        ['rId1', 'slide', 'slides/slide1.xml'],
        ['rId2', 'slide', 'slides/slide2.xml'],
      ]),
      'ppt/slides/slide1.xml': slide('Shown second', pic),
      'ppt/slides/_rels/slide1.xml.rels': rels([
        ['rIdImg', 'image', '../media/image1.png'],
        ['rIdN', 'notesSlide', '../notesSlides/notesSlide1.xml'],
      ]),
      'ppt/notesSlides/notesSlide1.xml': notes,
      'ppt/slides/slide2.xml': slide('Shown first'),
      'ppt/media/image1.png': png(100, 100),
    });
    const doc = parsePptx(file);
    expect(doc.blocks).toEqual([
      { kind: 'heading', text: 'Shown first', level: 1, page: 1 },
      { kind: 'heading', text: 'Shown second', level: 1, page: 2 },
      { kind: 'paragraph', text: 'Speaker notes: Say hello', page: 2 },
    ]);
    expect(doc.images).toMatchObject([{ width: 100, height: 100, page: 2, origin: 'figure' }]);
  });

  it('refuses an encrypted presentation', () => {
    expect(failure(() => parsePptx(fixture('password-protected.xlsx')))).toMatchObject({
      reason: 'encrypted',
      message: 'The presentation is password-protected',
    });
  });
});

// ---------------------------------------------------------------------------------------------

describe('parseXlsx', () => {
  it('reads the Vodafone workbook with section titles and header context', () => {
    const doc = parseXlsx(fixture('vodafone-financials.xlsx'));
    expect(doc.pageCount).toBe(1);
    expect(doc.blocks[0]).toEqual({ kind: 'heading', text: 'Index', level: 1, page: 1, sheet: 'Index' });
    expect(doc.blocks).toContainEqual({ kind: 'heading', text: 'Operational metrics', level: 2, page: 1, sheet: 'Index' });
    expect(doc.blocks).toContainEqual({
      kind: 'table_row',
      text: 'Topic: Mobile ARPU; Period: Nine quarters to 30 June 2023; Page: 13',
      page: 1,
      sheet: 'Index',
    });
    // The repeated "Topic, Period, Page" header rows are not content.
    expect(texts(doc).filter((t) => t.startsWith('Topic; Period'))).toEqual([]);
  });

  it('keeps workbook order and names, and reads every kind of cell', () => {
    const styles = `<styleSheet xmlns="${NS.x}"><numFmts><numFmt numFmtId="164" formatCode="yyyy\\-mm\\-dd hh:mm"/><numFmt numFmtId="165" formatCode="&quot;Total&quot; 0.00"/></numFmts><cellXfs><xf numFmtId="0"/><xf numFmtId="14"/><xf numFmtId="164"/><xf numFmtId="10"/><xf numFmtId="165"/></cellXfs></styleSheet>`;
    const rows =
      `<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="inlineStr"><is><t>Active</t></is></c><c r="D1" t="str"><v>Share</v></c><c r="E1" t="s"><v>2</v></c><c r="F1" t="s"><v>3</v></c></row>` +
      `<row r="2"/>` +
      `<row r="3"><c r="A3" t="s"><v>4</v></c><c r="B3" s="1"><v>45292</v></c><c r="C3" t="b"><v>1</v></c><c r="D3" s="3"><v>0.125</v></c><c r="E3" s="2"><v>45292.75</v></c><c r="F3" s="4"><v>0.30000000000000004</v></c></row>` +
      `<row r="4"><c r="A4" t="s"><v>5</v></c><c r="C4" t="b"><v>0</v></c><c r="D4" t="e"><v>#DIV/0!</v></c></row>`;
    const doc = parseXlsx(
      xlsx(
        [
          {
            name: 'Summary',
            rows: '<row r="1"><c r="A1" t="inlineStr"><is><t>Overview</t></is></c><c r="B1" t="inlineStr"><is><t>x</t></is></c></row>',
            part: 'worksheets/sheet9.xml',
          },
          { name: 'Empty', rows: '' },
          { name: 'People', rows },
        ],
        { sharedStrings: ['Name', 'Joined', 'Updated', 'Total', 'Ann', 'Bob'], styles },
      ),
    );
    expect(doc.pageCount).toBe(3);
    expect(doc.blocks.filter((b) => b.kind === 'heading').map((b) => [b.text, b.page, b.sheet])).toEqual([
      ['Summary', 1, 'Summary'],
      ['People', 3, 'People'],
    ]);
    expect(doc.blocks.filter((b) => b.sheet === 'People' && b.kind === 'table_row')).toEqual([
      {
        kind: 'table_row',
        text: 'Name: Ann; Joined: 2024-01-01; Active: TRUE; Share: 12.5%; Updated: 2024-01-01T18:00:00; Total: 0.3',
        page: 3,
        sheet: 'People',
      },
      { kind: 'table_row', text: 'Name: Bob; Active: FALSE', page: 3, sheet: 'People' },
    ]);
  });

  it('spreads merged cells down their column', () => {
    const rows =
      '<row r="1"><c r="A1" t="inlineStr"><is><t>Region</t></is></c><c r="B1" t="inlineStr"><is><t>City</t></is></c></row>' +
      '<row r="2"><c r="A2" t="inlineStr"><is><t>North</t></is></c><c r="B2" t="inlineStr"><is><t>Oslo</t></is></c></row>' +
      '<row r="3"><c r="B3" t="inlineStr"><is><t>Bergen</t></is></c></row>';
    const file = pack('xlsx', 'xl/workbook.xml', {
      'xl/workbook.xml': `<workbook xmlns="${NS.x}" xmlns:r="${NS.r}"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>`,
      'xl/_rels/workbook.xml.rels': rels([['rId1', 'worksheet', 'worksheets/sheet1.xml']]),
      'xl/worksheets/sheet1.xml': `<worksheet xmlns="${NS.x}"><sheetData>${rows}</sheetData><mergeCells count="1"><mergeCell ref="A2:A3"/></mergeCells></worksheet>`,
    });
    expect(texts(parseXlsx(file), 'table_row')).toEqual(['Region: North; City: Oslo', 'Region: North; City: Bergen']);
  });

  it('stops at the cell cap with a warning', () => {
    const perRow = 10;
    const rowCount = MAX_CELLS / perRow + 50;
    const cells = (r: number) =>
      Array.from({ length: perRow }, (_, c) => `<c t="inlineStr"><is><t>v${c}-${r}</t></is></c>`).join('');
    const rows = Array.from({ length: rowCount }, (_, r) => `<row r="${r + 1}">${cells(r)}</row>`).join('');
    const doc = parseXlsx(xlsx([{ name: 'Big', rows }]));
    expect(doc.warnings).toEqual([`The workbook has more than ${MAX_CELLS} cells; only the first ${MAX_CELLS} were read`]);
    expect(doc.blocks.filter((b) => b.kind === 'table_row').length).toBe(MAX_CELLS / perRow - 1);
  });

  it('refuses an encrypted workbook', () => {
    expect(failure(() => parseXlsx(fixture('password-protected.xlsx')))).toMatchObject({
      reason: 'encrypted',
      message: 'The workbook is password-protected',
    });
  });

  it('formats numbers as a reader sees them', () => {
    expect(formatKind('General')).toBe('number');
    expect(formatKind('#,##0.00')).toBe('number');
    expect(formatKind('[Red]0.00')).toBe('number');
    expect(formatKind('d/m/yyyy')).toBe('date');
    expect(formatKind('mmm yy')).toBe('date');
    expect(formatKind('h:mm AM/PM')).toBe('time');
    expect(formatKind('[h]:mm:ss')).toBe('time');
    expect(formatKind('yyyy-mm-dd hh:mm')).toBe('datetime');
    expect(formatKind('0.0%')).toBe('percent');
    expect(formatNumber(1, 'date')).toBe('1900-01-01');
    expect(formatNumber(61, 'date')).toBe('1900-03-01');
    expect(formatNumber(0, 'date', true)).toBe('1904-01-01');
    expect(formatNumber(0.5, 'time')).toBe('12:00:00');
    expect(formatNumber(1234.5599999999999, 'number')).toBe('1234.56');
  });
});
