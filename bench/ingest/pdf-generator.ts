/**
 * A small PDF writer for the ingestion benchmark: seeded, deterministic documents of A4 pages set in
 * two justified columns of Helvetica 9 pt (standard font, WinAnsiEncoding), with bold section headings,
 * page numbers and, on chosen pages, a line chart drawn as vector paths or a photo-like RGB image
 * XObject. Content streams and images are FlateDecode (images with the PNG "Up" predictor, as PDF
 * producers write them); the cross-reference table is exact.
 *
 * Lines carry no space glyphs: word gaps and per-glyph offsets are fractional TJ numbers, as Word or
 * Chrome position glyphs. That gives pdf.js as many text operators per byte as real documents do.
 */
import { zlibSync } from 'fflate';
import { seededRandom } from '../../devstack/harness/seeded-random.ts';

export interface PdfSpec {
  pages: number;
  seed?: number;
  /** Every n-th page (1-based) carries a photo, an RGB image XObject; 0 for none. */
  photoEvery?: number;
  photoWidth?: number;
  photoHeight?: number;
  /** Every n-th page without a photo carries a line chart drawn as vector paths; 0 for none. */
  chartEvery?: number;
  /** At most this many lines of text in each column; a column fills the page by default. */
  linesPerColumn?: number;
}

export interface GeneratedPdf {
  bytes: Uint8Array;
  pages: number;
  photos: number;
  charts: number;
  /** Bytes of compressed photo streams, the rest being text, charts and structure. */
  photoBytes: number;
  /** The words drawn on each page, in reading order, to check a parser against. */
  pageWords: string[][];
}

// Helvetica and Helvetica-Bold advance widths (1/1000 em) for ASCII 32–126, from the standard AFM files.
// biome-ignore format: a table
const HELVETICA = [
  278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556, 556, 556, 556, 556, 556,
  556, 556, 278, 278, 584, 584, 584, 556, 1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778,
  667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556, 333, 556, 556, 500, 556, 556, 278, 556,
  556, 222, 222, 500, 222, 833, 556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,
];
// biome-ignore format: a table
const HELVETICA_BOLD = [
  278, 333, 474, 556, 556, 889, 722, 238, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556, 556, 556, 556, 556, 556,
  556, 556, 333, 333, 584, 584, 584, 611, 975, 722, 722, 722, 722, 667, 611, 778, 722, 278, 556, 722, 611, 833, 722, 778,
  667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 333, 278, 333, 584, 556, 333, 556, 611, 556, 611, 556, 333, 611,
  611, 278, 278, 556, 278, 889, 611, 611, 611, 611, 389, 556, 333, 611, 556, 778, 556, 556, 500, 389, 280, 389, 584,
];

// biome-ignore format: a word list
const WORDS = (
  'the of and to in a is that for it as was with be by on not he this are or his from at which but have an they you were ' +
  'her she there been one all we their has would when if so no will more can out up about into than them only other some ' +
  'time could these two may first then do any like my now over such our man me even most made after also did many before ' +
  'must through back years where much your way well down should because each just those people how too little state good ' +
  'very make world still own see men work long get here between both life being under never day same another know while ' +
  'last might us great old year off come since against go came right used take three system process data model results ' +
  'analysis method section table figure value report market revenue growth customer service network operating quarter ' +
  'measurement structure document retrieval evidence sample average increase decrease company policy research question ' +
  'approach performance development management information program community government experience different important ' +
  'following including particular available significant relationship environment technology production distribution ' +
  'material pressure temperature surface energy signal frequency response pattern sequence reference committee agreement'
).split(' ');
const NOUNS = WORDS.slice(WORDS.indexOf('system'));
const TITLE_WORDS =
  'Overview Methods Results Discussion Background Design Evaluation Operations Outlook Summary Risks Appendix'.split(' ');

const PAGE_WIDTH = 595;
const PAGE_HEIGHT = 842;
const MARGIN = 56;
const GUTTER = 18;
const COLUMN_WIDTH = (PAGE_WIDTH - 2 * MARGIN - GUTTER) / 2;
const BODY_SIZE = 9;
const HEADING_SIZE = 11;
const LEADING = 11;
const SPACE = 278;

function glyphWidth(widths: number[], char: string): number {
  return widths[char.charCodeAt(0) - 32] ?? 556;
}

function escapePdfString(text: string): string {
  return text.replace(/[\\()]/g, (c) => `\\${c}`);
}

/** A word typeset as TJ elements: glyph runs with occasional pair kerns, and its width in 1/1000 em. */
interface SetWord {
  text: string;
  parts: (string | number)[];
  width: number;
}

function setWord(text: string, widths: number[], random: () => number): SetWord {
  const parts: (string | number)[] = [];
  let run = '';
  let width = 0;
  for (const [i, char] of [...text].entries()) {
    width += glyphWidth(widths, char);
    run += char;
    // Every glyph placed on its own, with fractional offsets, as Word or Chrome write PDFs.
    if (i < text.length - 1) {
      const kern = Math.round(random() * 400 - 300) / 10;
      parts.push(run, kern);
      width -= kern;
      run = '';
    }
  }
  if (run) parts.push(run);
  return { text, parts, width };
}

/** Justified TJ for one line: word gaps are stretched offsets, the last line of a paragraph is set ragged. */
function lineOperator(words: SetWord[], justify: boolean, lineWidth: number): string {
  const natural = words.reduce((sum, w) => sum + w.width, 0) + SPACE * (words.length - 1);
  const stretch = justify && words.length > 1 ? (lineWidth - natural) / (words.length - 1) : 0;
  const gap = -Math.round((SPACE + stretch) * 10) / 10;
  const items: string[] = [];
  for (const [i, word] of words.entries()) {
    if (i > 0) items.push(String(gap));
    for (const part of word.parts) items.push(typeof part === 'number' ? String(part) : `(${escapePdfString(part)})`);
  }
  return `[${items.join('')}]TJ`;
}

class TextSource {
  private sectionNumber = 0;
  private paragraphsLeft = 0;
  constructor(private readonly random: () => number) {}

  private pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.random() * list.length)] as T;
  }

  sentence(): string {
    const length = 8 + Math.floor(this.random() * 17);
    const words: string[] = [];
    for (let i = 0; i < length; i++) {
      let word = this.random() < 0.04 ? `${Math.floor(this.random() * 2000)}` : this.pick(WORDS);
      if (i === 0) word = word.charAt(0).toUpperCase() + word.slice(1);
      if (i < length - 1 && this.random() < 0.08) word += ',';
      words.push(word);
    }
    return `${words.join(' ')}.`;
  }

  /** The next paragraph, or a heading when a section is due. */
  next(): { heading: boolean; text: string } {
    if (this.paragraphsLeft === 0) {
      this.paragraphsLeft = 4 + Math.floor(this.random() * 5);
      this.sectionNumber++;
      return {
        heading: true,
        text: `${this.sectionNumber}. ${this.pick(TITLE_WORDS)} of ${this.pick(NOUNS)} and ${this.pick(NOUNS)}`,
      };
    }
    this.paragraphsLeft--;
    const sentences = 3 + Math.floor(this.random() * 5);
    return { heading: false, text: Array.from({ length: sentences }, () => this.sentence()).join(' ') };
  }
}

/** Lays paragraphs into the columns of one page; returns the content operators and the words drawn. */
function textPage(
  source: TextSource,
  random: () => number,
  carry: { pending: SetWord[][] | null; heading: boolean },
  top: number,
  linesPerColumn = Number.POSITIVE_INFINITY,
): { ops: string; words: string[] } {
  const ops: string[] = ['BT'];
  const drawn: string[] = [];
  const lineWidth = (COLUMN_WIDTH * 1000) / BODY_SIZE;
  for (let column = 0; column < 2; column++) {
    const x = MARGIN + column * (COLUMN_WIDTH + GUTTER);
    let y = top;
    let lines = 0;
    while (y >= MARGIN + LEADING && lines < linesPerColumn) {
      if (!carry.pending) {
        const next = source.next();
        carry.heading = next.heading;
        const widths = next.heading ? HELVETICA_BOLD : HELVETICA;
        const size = next.heading ? HEADING_SIZE : BODY_SIZE;
        const words = next.text.split(' ').map((w) => setWord(w, widths, random));
        carry.pending = breakLines(words, (COLUMN_WIDTH * 1000) / size);
        // Space before a heading, half a line between paragraphs; not at the head of a column.
        if (y < top) y -= next.heading ? LEADING : LEADING / 2;
        if (next.heading && y < MARGIN + 3 * LEADING) break;
      }
      const size = carry.heading ? HEADING_SIZE : BODY_SIZE;
      const pending = carry.pending;
      while (pending.length > 0 && y >= MARGIN + LEADING && lines < linesPerColumn) {
        const line = pending.shift() as SetWord[];
        const justify = !carry.heading && pending.length > 0;
        ops.push(`/${carry.heading ? 'F2' : 'F1'} ${size} Tf 1 0 0 1 ${x.toFixed(2)} ${y.toFixed(2)} Tm`);
        ops.push(lineOperator(line, justify, lineWidth));
        drawn.push(...line.map((w) => w.text));
        y -= carry.heading ? LEADING + 3 : LEADING;
        lines++;
      }
      if (pending.length === 0) carry.pending = null;
    }
  }
  ops.push('ET');
  return { ops: ops.join('\n'), words: drawn };
}

function breakLines(words: SetWord[], lineWidth: number): SetWord[][] {
  const lines: SetWord[][] = [];
  let line: SetWord[] = [];
  let width = 0;
  for (const word of words) {
    const added = line.length === 0 ? word.width : width + SPACE + word.width;
    if (added > lineWidth && line.length > 0) {
      lines.push(line);
      line = [word];
      width = word.width;
    } else {
      line.push(word);
      width = added;
    }
  }
  if (line.length > 0) lines.push(line);
  return lines;
}

/**
 * A photo-like RGB picture: smooth colour fields with sensor-like noise, so it compresses about as
 * well as a photograph stored losslessly does (to roughly half). Rows are PNG "Up"-filtered.
 */
function photo(width: number, height: number, random: () => number): Uint8Array {
  const fx = 2 + random() * 6;
  const fy = 2 + random() * 6;
  const phase = random() * Math.PI * 2;
  const tint = [random(), random(), random()];
  const rowBytes = width * 3;
  const raw = new Uint8Array((rowBytes + 1) * height);
  const previous = new Uint8Array(rowBytes);
  const row = new Uint8Array(rowBytes);
  for (let y = 0; y < height; y++) {
    const v = y / height;
    for (let x = 0; x < width; x++) {
      const u = x / width;
      const field = Math.sin(u * fx + phase) * Math.cos(v * fy - phase) + 0.5 * Math.sin((u + v) * (fx + fy));
      for (let c = 0; c < 3; c++) {
        const level = 128 + 90 * field * (0.5 + (tint[c] as number)) + (random() - 0.5) * 24;
        row[x * 3 + c] = Math.max(0, Math.min(255, Math.round(level)));
      }
    }
    const offset = y * (rowBytes + 1);
    raw[offset] = 2;
    for (let i = 0; i < rowBytes; i++) raw[offset + 1 + i] = ((row[i] as number) - (previous[i] as number)) & 0xff;
    previous.set(row);
  }
  return zlibSync(raw, { level: 6 });
}

const CHART_HEIGHT = 220;
const SERIES = ['0.12 0.35 0.7 RG', '0.85 0.33 0.1 RG', '0.2 0.6 0.25 RG'];

/** A line chart as vector paths: frame, grid, and three random-walk series of 800 points each (daily data over two years). */
function chart(x: number, y: number, width: number, height: number, random: () => number): string {
  const ops = ['q 0.6 w 0 0 0 RG', `${x} ${y} ${width.toFixed(2)} ${height} re S`, '0.3 w 0.8 0.8 0.8 RG [2 2] 0 d'];
  for (let i = 1; i < 5; i++)
    ops.push(`${x} ${(y + (i * height) / 5).toFixed(2)} m ${(x + width).toFixed(2)} ${(y + (i * height) / 5).toFixed(2)} l S`);
  ops.push('[] 0 d 0.8 w');
  const points = 800;
  for (const colour of SERIES) {
    let level = 0.3 + random() * 0.4;
    const path: string[] = [colour];
    for (let i = 0; i < points; i++) {
      level = Math.min(0.95, Math.max(0.05, level + (random() - 0.5) * 0.06));
      const px = x + (i / (points - 1)) * width;
      path.push(`${px.toFixed(2)} ${(y + level * height).toFixed(2)} ${i === 0 ? 'm' : 'l'}`);
    }
    ops.push(`${path.join(' ')} S`);
  }
  ops.push('Q');
  return ops.join('\n');
}

const encoder = new TextEncoder();

export function generatePdf(spec: PdfSpec): GeneratedPdf {
  const random = seededRandom(spec.seed ?? 1);
  const source = new TextSource(random);
  const photoWidth = spec.photoWidth ?? 1200;
  const photoHeight = spec.photoHeight ?? 900;

  const parts: Uint8Array[] = [];
  const offsets: number[] = [];
  let length = 0;
  const emit = (data: string | Uint8Array) => {
    const bytes = typeof data === 'string' ? encoder.encode(data) : data;
    parts.push(bytes);
    length += bytes.byteLength;
  };
  const object = (id: number, body: string, stream?: Uint8Array) => {
    offsets[id] = length;
    if (stream) {
      emit(`${id} 0 obj\n${body.replace(/>>$/, `/Length ${stream.byteLength}>>`)}\nstream\n`);
      emit(stream);
      emit('\nendstream\nendobj\n');
    } else {
      emit(`${id} 0 obj\n${body}\nendobj\n`);
    }
  };

  emit('%PDF-1.7\n');
  emit(new Uint8Array([0x25, 0xe2, 0xe3, 0xcf, 0xd3, 0x0a]));
  object(1, '<</Type/Catalog/Pages 2 0 R>>');
  object(3, '<</Type/Font/Subtype/Type1/BaseFont/Helvetica/Encoding/WinAnsiEncoding>>');
  object(4, '<</Type/Font/Subtype/Type1/BaseFont/Helvetica-Bold/Encoding/WinAnsiEncoding>>');
  object(5, '<</Producer(rag-service bench/ingest/pdf-generator.ts)/Title(Generated benchmark document)>>');

  let nextId = 6;
  const kids: number[] = [];
  const pageWords: string[][] = [];
  const carry = { pending: null as SetWord[][] | null, heading: false };
  let photos = 0;
  let charts = 0;
  let photoBytes = 0;
  const every = (n: number | undefined, page: number) => (n ?? 0) > 0 && page % (n as number) === 0;
  for (let page = 1; page <= spec.pages; page++) {
    const pageId = nextId++;
    const contentId = nextId++;
    kids.push(pageId);
    const ops: string[] = [];
    const words: string[] = [];
    let top = PAGE_HEIGHT - MARGIN - BODY_SIZE;
    let xobjects = '';
    const drawWidth = PAGE_WIDTH - 2 * MARGIN;
    const figure = (height: number, label: string) => {
      const y = PAGE_HEIGHT - MARGIN - height;
      const caption = [...label.split(' '), 'Measured', ...source.sentence().toLowerCase().split(' ').slice(0, 12)];
      words.push(...caption);
      ops.push(`BT /F1 8 Tf 1 0 0 1 ${MARGIN} ${(y - 12).toFixed(2)} Tm (${escapePdfString(caption.join(' '))})Tj ET`);
      top = y - 12 - 2 * LEADING;
      return y;
    };
    if (every(spec.photoEvery, page)) {
      const imageId = nextId++;
      photos++;
      const drawHeight = (drawWidth * photoHeight) / photoWidth;
      const y = figure(drawHeight, `Figure ${photos + charts}.`);
      const data = photo(photoWidth, photoHeight, random);
      photoBytes += data.byteLength;
      object(
        imageId,
        `<</Type/XObject/Subtype/Image/Width ${photoWidth}/Height ${photoHeight}/ColorSpace/DeviceRGB/BitsPerComponent 8` +
          `/Filter/FlateDecode/DecodeParms<</Predictor 12/Colors 3/BitsPerComponent 8/Columns ${photoWidth}>>>>`,
        data,
      );
      xobjects = `/XObject<</Im1 ${imageId} 0 R>>`;
      ops.unshift(`q ${drawWidth.toFixed(2)} 0 0 ${drawHeight.toFixed(2)} ${MARGIN} ${y.toFixed(2)} cm /Im1 Do Q`);
    } else if (every(spec.chartEvery, page)) {
      charts++;
      const y = figure(CHART_HEIGHT, `Figure ${photos + charts}.`);
      ops.unshift(chart(MARGIN, y, drawWidth, CHART_HEIGHT, random));
    }
    const text = textPage(source, random, carry, top, spec.linesPerColumn);
    ops.push(text.ops);
    ops.push(`BT /F1 8 Tf 1 0 0 1 ${PAGE_WIDTH / 2 - 6} ${MARGIN / 2} Tm (${page})Tj ET`);
    pageWords.push([...words, ...text.words]);

    object(contentId, '<</Filter/FlateDecode>>', zlibSync(encoder.encode(ops.join('\n')), { level: 6 }));
    object(
      pageId,
      `<</Type/Page/Parent 2 0 R/MediaBox[0 0 ${PAGE_WIDTH} ${PAGE_HEIGHT}]/Contents ${contentId} 0 R` +
        `/Resources<</Font<</F1 3 0 R/F2 4 0 R>>${xobjects}>>>>`,
    );
  }
  object(2, `<</Type/Pages/Count ${kids.length}/Kids[${kids.map((id) => `${id} 0 R`).join(' ')}]>>`);

  const xrefOffset = length;
  const entries = ['0000000000 65535 f \n'];
  for (let id = 1; id < nextId; id++) entries.push(`${String(offsets[id]).padStart(10, '0')} 00000 n \n`);
  emit(`xref\n0 ${nextId}\n${entries.join('')}`);
  emit(`trailer\n<</Size ${nextId}/Root 1 0 R/Info 5 0 R>>\nstartxref\n${xrefOffset}\n%%EOF\n`);

  const bytes = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.byteLength;
  }
  return { bytes, pages: spec.pages, photos, charts, photoBytes, pageWords };
}
