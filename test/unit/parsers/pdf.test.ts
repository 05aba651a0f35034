import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parsePdf } from '../../../workers/ingest/src/parsers/pdf.ts';
import {
  type Block,
  DEFAULT_PARSE_LIMITS,
  type ExtractedImage,
  type ParsedDocument,
} from '../../../workers/ingest/src/parsers/types.ts';
import { DOCS_DIR, fixture } from '../../support/documents.ts';
import { rejection } from '../../support/parsing.ts';
import { seededBytes } from '../../support/seeded-random.ts';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PDF_MODULE = fileURLToPath(new URL('../../../workers/ingest/src/parsers/pdf.ts', import.meta.url));
const execFileAsync = promisify(execFile);
const LIMITS = DEFAULT_PARSE_LIMITS;
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

function pageText(doc: ParsedDocument, page: number): string {
  return doc.blocks
    .filter((b) => b.page === page)
    .map((b) => b.text)
    .join('\n');
}

function findBlock(doc: ParsedDocument, text: string): Block | undefined {
  return doc.blocks.find((b) => b.text.includes(text));
}

function pngSize(png: Uint8Array): { width: number; height: number } {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

function expectValidPng(image: ExtractedImage): void {
  expect([...image.bytes.subarray(0, 8)]).toEqual(PNG_SIGNATURE);
  expect(String.fromCharCode(...image.bytes.subarray(12, 16))).toBe('IHDR');
  expect(pngSize(image.bytes)).toEqual({ width: image.width, height: image.height });
  expect(String.fromCharCode(...image.bytes.subarray(image.bytes.length - 8, image.bytes.length - 4))).toBe('IEND');
}

async function loadSharp() {
  try {
    return (await import('sharp')).default;
  } catch {
    return undefined;
  }
}

/** RGBA pixels of a PNG, decoded by sharp (an independent decoder). */
async function rgba(png: Uint8Array): Promise<Uint8Array | undefined> {
  const sharp = await loadSharp();
  if (!sharp) return undefined;
  const { data } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return new Uint8Array(data);
}

// ---------------------------------------------------------------------------------------------------------
// A small PDF writer, so layouts and image kinds the fixtures lack can be tested exactly.

interface ImageSpec {
  width: number;
  height: number;
  colorSpace: 'DeviceGray' | 'DeviceRGB';
  bits: 1 | 8;
  data: Uint8Array;
  /** 8-bit alpha, one byte per pixel. */
  smask?: Uint8Array;
  /** A stencil mask (1 bit, painted in the fill colour where the sample is 0). */
  imageMask?: boolean;
}

interface PageSpec {
  content: string;
  images?: Record<string, ImageSpec>;
  /** A page that cannot be loaded. */
  broken?: boolean;
}

function buildPdf(pages: PageSpec[]): Uint8Array {
  const latin1 = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0) & 0xff);
  const objects: Uint8Array[][] = [];
  const add = (parts: (string | Uint8Array)[]) => {
    objects.push(parts.map((p) => (typeof p === 'string' ? latin1(p) : p)));
    return objects.length;
  };
  const stream = (dict: string, data: Uint8Array) => add([`<< ${dict} /Length ${data.length} >>\nstream\n`, data, '\nendstream']);

  const catalog = add(['<< /Type /Catalog /Pages 2 0 R >>']);
  const pagesId = add(['']); // filled in below
  const regular = add(['<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>']);
  const bold = add(['<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>']);
  const kids: number[] = [];
  for (const page of pages) {
    if (page.broken) {
      // An intermediate page-tree node whose only kid points at a missing object.
      kids.push(add([`<< /Type /Pages /Parent ${pagesId} 0 R /Kids [999 0 R] /Count 1 >>`]));
      continue;
    }
    const xobjects: string[] = [];
    for (const [name, img] of Object.entries(page.images ?? {})) {
      const smask = img.smask
        ? stream(
            `/Type /XObject /Subtype /Image /Width ${img.width} /Height ${img.height} /ColorSpace /DeviceGray /BitsPerComponent 8`,
            img.smask,
          )
        : undefined;
      const kind = img.imageMask ? '/ImageMask true' : `/ColorSpace /${img.colorSpace}`;
      const id = stream(
        `/Type /XObject /Subtype /Image /Width ${img.width} /Height ${img.height} ${kind} /BitsPerComponent ${img.bits}${smask ? ` /SMask ${smask} 0 R` : ''}`,
        img.data,
      );
      xobjects.push(`/${name} ${id} 0 R`);
    }
    const content = stream('', latin1(page.content));
    kids.push(
      add([
        `<< /Type /Page /Parent ${pagesId} 0 R /MediaBox [0 0 612 792] /Contents ${content} 0 R /Resources << /Font << /F1 ${regular} 0 R /F2 ${bold} 0 R >> /XObject << ${xobjects.join(' ')} >> >> >>`,
      ]),
    );
  }
  objects[pagesId - 1] = [latin1(`<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${kids.length} >>`)];

  const chunks: Uint8Array[] = [latin1('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n')];
  let offset = chunks[0]?.length ?? 0;
  const offsets: number[] = [];
  objects.forEach((parts, i) => {
    offsets.push(offset);
    for (const part of [latin1(`${i + 1} 0 obj\n`), ...parts, latin1('\nendobj\n')]) {
      chunks.push(part);
      offset += part.length;
    }
  });
  const xref = [
    `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`,
    ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`),
  ];
  chunks.push(
    latin1(`${xref.join('')}trailer\n<< /Size ${objects.length + 1} /Root ${catalog} 0 R >>\nstartxref\n${offset}\n%%EOF\n`),
  );
  return new Uint8Array(Buffer.concat(chunks));
}

/** A PDF string literal with its special characters escaped. */
function str(text: string): string {
  return `(${text.replace(/[\\()]/g, (c) => `\\${c}`)})`;
}

function textAt(font: 'F1' | 'F2', size: number, x: number, y: number, text: string): string {
  return `BT /${font} ${size} Tf ${x} ${y} Td ${str(text)} Tj ET\n`;
}

/** A line of body text: the regular face at 10 pt, by default at the left margin. */
const bodyText = (y: number, text: string, x = 72) => textAt('F1', 10, x, y, text);

/** A one-page PDF of these content-stream pieces, parsed. */
const parsePage = (...content: string[]) => parsePdf(buildPdf([{ content: content.join('') }]), LIMITS);

const LEFT_LINES = [
  'Alpha column opens the discussion here,',
  'and keeps talking about the first topic',
  'for several lines of ordinary prose text',
  'until the left column finally ends now.',
];
const RIGHT_LINES = [
  'Beta column starts the second topic and',
  'continues with more ordinary prose here',
  'so that both columns have long lines in',
  'them, which ends the right column text.',
];

describe('parsePdf on generated PDFs', () => {
  it('reads two columns column by column even when the content stream runs across them', async () => {
    let content = textAt('F2', 20, 72, 720, 'A Study of Two Columns');
    LEFT_LINES.forEach((line, i) => {
      // Row by row: left line i, then right line i.
      content += bodyText(680 - i * 12, line);
      content += bodyText(680 - i * 12, RIGHT_LINES[i] as string, 320);
    }, 320);
    const doc = await parsePage(content);
    const text = pageText(doc, 1);
    const leftEnd = text.indexOf('the left column finally ends now.');
    const rightStart = text.indexOf('Beta column starts the second topic');
    expect(leftEnd).toBeGreaterThan(-1);
    expect(rightStart).toBeGreaterThan(leftEnd);
    expect(text.indexOf('A Study of Two Columns')).toBeLessThan(text.indexOf('Alpha column opens'));
    expect(findBlock(doc, 'A Study of Two Columns')).toMatchObject({ kind: 'heading', level: 1, page: 1 });
    expect(findBlock(doc, 'Alpha column opens')?.text).toBe(LEFT_LINES.join(' '));
    expect(findBlock(doc, 'Beta column starts')?.text).toBe(RIGHT_LINES.join(' '));
  });

  it('keeps table rows on one line each, cells in order', async () => {
    const rows = [
      ['Region', 'Units', 'Revenue'],
      ['North', '120', '4,500'],
      ['South', '95', '3,100'],
    ];
    let content = bodyText(720, 'Quarterly sales by region are shown below.');
    // Column by column, so only geometry can put the rows back together.
    for (const [c, x] of [72, 250, 400].entries()) {
      rows.forEach((row, r) => {
        content += bodyText(690 - r * 14, row[c] as string, x);
      }, x);
    }
    const doc = await parsePage(content);
    const tableRows = doc.blocks.filter((b) => b.kind === 'table_row').map((b) => b.text);
    expect(tableRows).toEqual(['Region | Units | Revenue', 'North | 120 | 4,500', 'South | 95 | 3,100']);
    expect(doc.blocks[0]).toMatchObject({ kind: 'paragraph', text: 'Quarterly sales by region are shown below.' });
  });

  it('joins hyphenated line breaks, keeping hyphens the document uses in compounds', async () => {
    const lines = [
      'The state-of-the-art method makes every docu-',
      'ment easy to search, and this state-of-the-',
      'art approach works with Lucene-',
      'BM25 as well.',
    ];
    const doc = await parsePage(...lines.map((line, i) => bodyText(700 - i * 12, line)));
    expect(doc.blocks).toHaveLength(1);
    expect(doc.blocks[0]?.text).toBe(
      'The state-of-the-art method makes every document easy to search, and this state-of-the-art approach works with Lucene-BM25 as well.',
    );
  });

  it('ranks headings by size across pages and finds bold body-size headings', async () => {
    const body = 'Body text in the regular face that fills a line of the page.';
    const page1 =
      textAt('F2', 24, 72, 720, 'Document Title') +
      textAt('F2', 14, 72, 680, 'First Section') +
      bodyText(660, body) +
      bodyText(648, body) +
      textAt('F2', 10, 72, 620, 'A bold subsection') +
      bodyText(606, body);
    const page2 = textAt('F2', 14, 72, 720, 'Second Section') + bodyText(700, body) + bodyText(688, body);
    const doc = await parsePdf(buildPdf([{ content: page1 }, { content: page2 }]), LIMITS);
    const headings = doc.blocks.filter((b) => b.kind === 'heading').map((b) => [b.text, b.level, b.page]);
    expect(headings).toEqual([
      ['Document Title', 1, 1],
      ['First Section', 2, 1],
      ['A bold subsection', 3, 1],
      ['Second Section', 2, 2],
    ]);
    expect(doc.pageCount).toBe(2);
    expect(doc.blocks.filter((b) => b.kind === 'paragraph').every((b) => b.text.startsWith('Body text'))).toBe(true);
  });

  it('splits paragraphs at vertical gaps and list items at their markers', async () => {
    const doc = await parsePage(
      bodyText(700, 'The first paragraph has one line.'),
      bodyText(670, 'The second paragraph follows a gap'),
      bodyText(658, 'and runs onto a second line.'),
      bodyText(640, '\x95 first bullet item'),
      bodyText(628, '\x95 second bullet item'),
    );
    expect(doc.blocks.map((b) => [b.kind, b.text])).toEqual([
      ['paragraph', 'The first paragraph has one line.'],
      ['paragraph', 'The second paragraph follows a gap and runs onto a second line.'],
      ['list_item', '• first bullet item'],
      ['list_item', '• second bullet item'],
    ]);
  });

  it('extracts figures of every image kind as PNGs with the right pixels, skipping icons', async () => {
    const gray = new Uint8Array(80 * 80).map((_, i) => (i % 80) * 3);
    const rgb = new Uint8Array(100 * 70 * 3).map((_, i) => (i % 3 === 0 ? 200 : i % 3 === 1 ? 30 : 90));
    // 96×64, 1 bit: alternating 8-pixel stripes, 1 = white.
    const bits = new Uint8Array((96 / 8) * 64).map((_, i) => (i % 2 === 0 ? 0xff : 0x00));
    const alpha = new Uint8Array(72 * 72).map((_, i) => (i < 72 * 36 ? 255 : 0));
    const withAlpha = new Uint8Array(72 * 72 * 3).fill(10);
    const icon = new Uint8Array(16 * 16 * 3).fill(128);
    const images: Record<string, ImageSpec> = {
      Gray: { width: 80, height: 80, colorSpace: 'DeviceGray', bits: 8, data: gray },
      Rgb: { width: 100, height: 70, colorSpace: 'DeviceRGB', bits: 8, data: rgb },
      Bits: { width: 96, height: 64, colorSpace: 'DeviceGray', bits: 1, data: bits },
      Alpha: { width: 72, height: 72, colorSpace: 'DeviceRGB', bits: 8, data: withAlpha, smask: alpha },
      Icon: { width: 16, height: 16, colorSpace: 'DeviceRGB', bits: 8, data: icon },
    };
    const content =
      bodyText(740, 'A page with several figures and a caption that is long enough.') +
      ['Gray', 'Rgb', 'Bits', 'Alpha', 'Icon'].map((n, i) => `q 100 0 0 80 ${72 + i * 100} 500 cm /${n} Do Q\n`).join('');
    const doc = await parsePdf(buildPdf([{ content, images }]), LIMITS);

    expect(doc.images.map((im) => [im.width, im.height, im.origin, im.page])).toEqual([
      [80, 80, 'figure', 1],
      [100, 70, 'figure', 1],
      [96, 64, 'figure', 1],
      [72, 72, 'figure', 1],
    ]);
    for (const image of doc.images) expectValidPng(image);

    const [grayPx, rgbPx, bitsPx, alphaPx] = await Promise.all(doc.images.map((im) => rgba(im.bytes)));
    if (!grayPx || !rgbPx || !bitsPx || !alphaPx) return; // no independent decoder installed
    // Gray: value = 3·x on every row.
    expect([grayPx[0], grayPx[4 * 10], grayPx[4 * (80 * 5 + 79)], grayPx[3]]).toEqual([0, 30, 237, 255]);
    expect([...rgbPx.subarray(4 * 123, 4 * 124)]).toEqual([200, 30, 90, 255]);
    // 1 bit: pixels 0–7 white, 8–15 black, on every row.
    expect([bitsPx[0], bitsPx[4 * 7], bitsPx[4 * 8], bitsPx[4 * 15], bitsPx[4 * (96 * 63 + 16)]]).toEqual([255, 255, 0, 0, 255]);
    // Alpha: the top half opaque, the bottom half transparent.
    expect([alphaPx[3], alphaPx[4 * (72 * 35) + 3], alphaPx[4 * (72 * 36) + 3], alphaPx[0]]).toEqual([255, 255, 0, 10]);
  });

  it('keeps an image drawn on several pages once and stops at maxImages with a warning', async () => {
    const img = (shade: number): ImageSpec => ({
      width: 70,
      height: 70,
      colorSpace: 'DeviceGray',
      bits: 8,
      data: new Uint8Array(70 * 70).fill(shade),
    });
    const caption = bodyText(740, 'Every page has some text so none of them counts as a scan.');
    const draw = 'q 200 0 0 200 72 300 cm /Im Do Q\n';
    const pages = [
      { content: caption + draw, images: { Im: img(40) } },
      { content: caption + draw, images: { Im: img(40) } },
      { content: caption + draw, images: { Im: img(90) } },
      { content: caption + draw, images: { Im: img(140) } },
    ];
    const all = await parsePdf(buildPdf(pages), LIMITS);
    expect(all.images.map((im) => im.page)).toEqual([1, 3, 4]);
    expect(all.warnings).toEqual([]);

    const limited = await parsePdf(buildPdf(pages), { ...LIMITS, maxImages: 2 });
    expect(limited.images.map((im) => im.page)).toEqual([1, 3]);
    expect(limited.warnings).toEqual(['Only the first 2 images were kept; 1 more figure was skipped']);

    const noSmall = await parsePdf(buildPdf(pages), { ...LIMITS, minImageSide: 71 });
    expect(noSmall.images).toEqual([]);
  });

  it('turns a page without text but with a page-size stencil scan into a scanned_page image', async () => {
    // 200×260 1-bit stencil mask: left half painted (sample 0), right half not.
    const row = new Uint8Array(25);
    row.fill(0x00, 0, 12);
    row.fill(0xff, 12);
    row[12] = 0x0f;
    const data = new Uint8Array(25 * 260);
    for (let y = 0; y < 260; y++) data.set(row, y * 25);
    const content = '0 g q 612 0 0 792 0 0 cm /Scan Do Q\n';
    const doc = await parsePdf(
      buildPdf([
        { content, images: { Scan: { width: 200, height: 260, colorSpace: 'DeviceGray', bits: 1, data, imageMask: true } } },
      ]),
      LIMITS,
    );
    expect(doc.blocks).toEqual([]);
    expect(doc.images).toHaveLength(1);
    const [scan] = doc.images;
    expect(scan).toMatchObject({ origin: 'scanned_page', page: 1, width: 200, height: 260 });
    expectValidPng(scan as ExtractedImage);
    const px = await rgba((scan as ExtractedImage).bytes);
    if (!px) return;
    // Painted samples (0 bits: pixels 0–99) are ink, black; the rest is paper, white.
    expect([px[0], px[4 * 96], px[4 * 99], px[4 * 100], px[4 * 103], px[4 * 199], px[4 * (200 * 259 + 50)]]).toEqual([
      0, 0, 0, 255, 255, 255, 0,
    ]);
  });

  it('rejects a PDF with neither text nor images as empty', async () => {
    const error = await rejection(parsePdf(buildPdf([{ content: '' }, { content: '0 0 m 100 100 l S\n' }]), LIMITS));
    expect(error.reason).toBe('empty');
    expect(error.message).toBe('The PDF contains no readable text or images');
  });

  it('rejects bytes that are not a PDF as corrupt, and an empty file as empty', async () => {
    expect((await rejection(parsePdf(seededBytes(4096, 7), LIMITS))).reason).toBe('corrupt');
    expect((await rejection(parsePdf(new TextEncoder().encode('hello, this is plain text'), LIMITS))).reason).toBe('corrupt');
    const empty = await rejection(parsePdf(new Uint8Array(0), LIMITS));
    expect(empty.reason).toBe('empty');
  });

  it('leaves the caller’s bytes intact', async () => {
    const bytes = buildPdf([{ content: textAt('F1', 12, 72, 700, 'Hello from a tiny PDF.') }]);
    const copy = bytes.slice();
    const doc = await parsePdf(bytes, LIMITS);
    expect(doc.blocks.map((b) => b.text)).toEqual(['Hello from a tiny PDF.']);
    expect(bytes).toEqual(copy);
  });

  it('reports an unreadable page as a warning and keeps the rest', async () => {
    const good = textAt('F1', 12, 72, 700, 'This page reads fine.');
    const doc = await parsePdf(buildPdf([{ content: good }, { content: '', broken: true }, { content: good }]), LIMITS);
    expect(doc.pageCount).toBe(3);
    expect(doc.blocks.map((b) => [b.page, b.text])).toEqual([
      [1, 'This page reads fine.'],
      [3, 'This page reads fine.'],
    ]);
    expect(doc.warnings).toHaveLength(1);
    expect(doc.warnings[0]).toMatch(/^Page 2 could not be read: \S/);
  });

  it('turns a page that times out into a warning, and fails only when no page could be read', async () => {
    const error = await rejection(parsePdf(fixture('multi-column-2p.pdf'), LIMITS, { pageTimeoutMs: 0 }));
    expect(error.reason).toBe('corrupt');
    expect(error.message).toBe('The PDF is damaged: none of its 2 pages could be read');
  });
});

describe('parsePdf on fixture documents', () => {
  it('paper-with-table: headings, table rows and joined hyphenation on page 1', async () => {
    const doc = await parsePdf(fixture('paper-with-table.pdf'), LIMITS);
    expect(doc.pageCount).toBe(1);
    expect(doc.warnings).toEqual([]);
    expect(doc.blocks.every((b) => b.page === 1)).toBe(true);
    expect(findBlock(doc, '3.1 Layout Detection Models')).toMatchObject({ kind: 'heading', text: '3.1 Layout Detection Models' });
    const rows = doc.blocks.filter((b) => b.kind === 'table_row').map((b) => b.text);
    expect(rows).toContain('PubLayNet [38] | F / M | M | Layouts of modern scientific documents');
    expect(rows).toContain('HJDataset [31] | F / M | - | Layouts of history Japanese documents');
    expect(rows).toHaveLength(6);
    const text = pageText(doc, 1);
    expect(text).toContain('Table 1: Current layout detection models in the LayoutParser model zoo');
    expect(text).toContain('the prediction performance can notably drop when models are applied to target samples');
    expect(text).toContain('lp://<dataset-name>/<model-architecture-name>');
  });

  it('multi-column-2p: two-column pages read column by column, text on the right pages', async () => {
    const doc = await parsePdf(fixture('multi-column-2p.pdf'), LIMITS);
    expect(doc.pageCount).toBe(2);
    expect(findBlock(doc, 'Dense Passage Retrieval for Open-Domain Question Answering')).toMatchObject({
      kind: 'heading',
      level: 1,
      page: 1,
    });
    expect(findBlock(doc, '1 Introduction')).toMatchObject({ kind: 'heading', page: 1 });
    expect(findBlock(doc, '2 Background')).toMatchObject({ kind: 'heading', page: 2 });
    expect(findBlock(doc, '3.1 Overview')).toMatchObject({ kind: 'heading', page: 2 });

    const page1 = pageText(doc, 1);
    const endOfColumn1 = page1.indexOf('indicating the needs of improving retrieval.');
    const startOfColumn2 = page1.indexOf('Retrieval in open-domain QA is usually implemented using TF-IDF');
    const endOfColumn2 = page1.indexOf('setting new state-of-the-art results on multiple open-domain');
    expect(endOfColumn1).toBeGreaterThan(page1.indexOf('Abstract'));
    expect(startOfColumn2).toBeGreaterThan(endOfColumn1);
    expect(endOfColumn2).toBeGreaterThan(startOfColumn2);
    expect(page1).toContain('the de facto method');
    expect(page1).toContain('by a simple dual-encoder framework');
    expect(page1).toContain('relies on efficient passage retrieval');

    const page2 = pageText(doc, 2);
    expect(page2).toContain('QA datasets, it also suffers from two weaknesses.');
    // The paragraph runs from the foot of column 1 to the head of column 2.
    expect(page2).toContain('More specifically, we assume the extractive QA setting');
    expect(page2.indexOf('Our contributions are twofold')).toBeLessThan(page2.indexOf('2 Background'));
    expect(page2).not.toContain('Dense Passage Retrieval for Open-Domain');
  });

  it('report-with-figures: figure images as PNGs with pages, text on each page', async () => {
    const doc = await parsePdf(fixture('report-with-figures-reliance.pdf'), LIMITS);
    expect(doc.pageCount).toBe(3);
    expect(doc.images.length).toBeGreaterThan(5);
    for (const image of doc.images) {
      expect(image.origin).toBe('figure');
      expect(image.width).toBeGreaterThanOrEqual(64);
      expect(image.height).toBeGreaterThanOrEqual(64);
      expect([1, 2, 3]).toContain(image.page);
      expectValidPng(image);
    }
    expect(new Set(doc.images.map((im) => im.page))).toEqual(new Set([1, 2]));
    expect(findBlock(doc, 'We Care')).toMatchObject({ kind: 'heading', page: 1 });
    expect(pageText(doc, 2)).toContain('Reliance Industries Limited (RIL) is a Fortune 500 company');
    expect(pageText(doc, 3)).toContain('Table of Contents');
    expect(pageText(doc, 3)).toContain('The Reliance Integrated Annual Report has been prepared in');
  });

  it('scan-linn-2col: the text-less page becomes one scanned_page image for OCR', async () => {
    const doc = await parsePdf(fixture('scan-linn-2col.pdf'), LIMITS);
    expect(doc.pageCount).toBe(1);
    expect(doc.blocks).toEqual([]);
    expect(doc.images).toHaveLength(1);
    const [scan] = doc.images as [ExtractedImage];
    expect(scan).toMatchObject({ origin: 'scanned_page', page: 1 });
    expectValidPng(scan);
    // A US Letter page scanned at a readable resolution.
    expect(scan.width).toBeGreaterThanOrEqual(1200);
    expect(scan.height / scan.width).toBeCloseTo(11 / 8.5, 1);
    const sharp = await loadSharp();
    if (!sharp) return;
    const stats = await sharp(scan.bytes).stats();
    // Mostly white paper with black print.
    expect(stats.channels[0]?.mean).toBeGreaterThan(180);
    expect(stats.channels[0]?.min).toBe(0);
  });

  it('password-protected: rejected as encrypted', async () => {
    const error = await rejection(parsePdf(fixture('password-protected.pdf'), LIMITS));
    expect(error.reason).toBe('encrypted');
    expect(error.message).toBe('The PDF is encrypted with a password');
  });

  it('corrupt-header-only: rejected as corrupt', async () => {
    const error = await rejection(parsePdf(fixture('corrupt-header-only.pdf'), LIMITS));
    expect(error.reason).toBe('corrupt');
  });

  it('a truncated PDF (its cross-reference stream cut off) fails cleanly as corrupt', async () => {
    const whole = fixture('multi-column-2p.pdf');
    const error = await rejection(parsePdf(whole.subarray(0, Math.floor(whole.length * 0.9)), LIMITS));
    expect(error.reason).toBe('corrupt');
  });

  it('keeps memory modest on the largest fixtures (peak RSS growth, measured in a fresh process)', async () => {
    // In-process sampling misses peaks inside synchronous decoding, and this worker's RSS already holds
    // earlier tests; a child's maxRSS after a warm-up parse measures exactly one document.
    const script = `
      import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
      import { parsePdf } from ${JSON.stringify(PDF_MODULE)};
      const read = (name) => new Uint8Array(readFileSync(${JSON.stringify(DOCS_DIR)} + name));
      await parsePdf(read('paper-with-table.pdf'));
      const base = process.resourceUsage().maxRSS;
      const doc = await parsePdf(read(process.argv[1]));
      console.log(JSON.stringify({ peakMb: (process.resourceUsage().maxRSS - base) / 1024, images: doc.images.length }));
    `;
    for (const name of ['scan-linn-2col.pdf', 'report-with-figures-reliance.pdf']) {
      const { stdout } = await execFileAsync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, name], {
        cwd: REPO_ROOT,
      });
      const { peakMb, images } = JSON.parse(stdout.trim().split('\n').pop() as string) as { peakMb: number; images: number };
      console.log(`${name}: peak RSS +${peakMb.toFixed(1)} MB above a warmed-up parser, ${images} images`);
      expect(images).toBeGreaterThan(0);
      expect(peakMb).toBeLessThan(64);
    }
  }, 60_000);
});
