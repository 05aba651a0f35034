/**
 * A long text PDF whose facts each sit on one known page, so that a question can be aimed at a late
 * page and its citation checked there: a chapter heading and about 2,400 characters of distinct
 * sentences (places, years and measurements drawn from a seeded generator) on every page, and a
 * page number at its foot. One fact is planted mid-page on page `fact.page`. Written with the
 * hostile-PDF writer's `pdfOf`, in Helvetica (a standard font, nothing embedded).
 */
import { deflateSync } from 'node:zlib';
import { type PdfObject, pdfOf } from './hostile-pdfs.ts';
import { seededRandom } from './seeded-random.ts';

export interface LongPdf {
  bytes: Uint8Array;
  /** Each page's lines as drawn, the heading first and the page number last. */
  pages: string[][];
  /** The planted fact, the question it answers, and its page (1-based). */
  fact: { page: number; sentence: string; question: string };
}

const PLACES = (
  'Ashford Bramley Calder Dunmore Elsworth Fernhill Glenrock Harwick Inverly Jesmond Kelso Larkhall Merriton ' +
  'Northby Oakhurst Penrith Quarley Redmere Saltash Thornbury Upwell Varley Westcott Yarrow'
).split(' ');
const SUBJECTS = (
  'water treatment works|grain store|weather station|rail depot|river gauge|harbour office|paper mill|' +
  'district library|tram shed|brick kiln|pumping station|market hall|signal box|textile works|county archive'
).split('|');
const MEASURES = [
  ['recorded', 'millimetres of rain'],
  ['handled', 'tonnes of freight'],
  ['employed', 'workers'],
  ['lent', 'volumes'],
  ['pumped', 'megalitres'],
  ['measured', 'degrees of frost'],
  ['served', 'households'],
  ['sold', 'tickets'],
] as const;
const CLAUSES = [
  'according to the annual return',
  'which the inspectors thought unusually high',
  'before the new wing was opened',
  'despite a month of flooding in the spring',
  'as the ledger for that season shows',
  'a figure not matched again for a decade',
  'after the roof was repaired',
  'while the old engine was still in use',
];
const TITLES = 'Records Returns Ledgers Surveys Accounts Registers Inventories Reports'.split(' ');

const FACT_PAGE = 73;
const FACT = 'The Kestrel Point lighthouse was rebuilt in 1887 with its lantern 14 metres above high water.';
const QUESTION = 'In which year was the Kestrel Point lighthouse rebuilt?';

const FONT_SIZE = 11;
const LEADING = 14;
const LINE_CHARS = 80;
const LINES_PER_PAGE = 28;

function wrap(text: string): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > LINE_CHARS) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines;
}

const pdfString = (text: string) => text.replace(/[\\()]/g, (c) => `\\${c}`);

/** `pages` pages (at least FACT_PAGE), the same for the same seed. */
export function longPdf(pages = 100, seed = 1): LongPdf {
  if (pages < FACT_PAGE) throw new Error(`longPdf: the fact is on page ${FACT_PAGE}, so at least ${FACT_PAGE} pages`);
  const random = seededRandom(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const sentence = () => {
    const [verb, unit] = pick(MEASURES);
    const year = 1850 + Math.floor(random() * 150);
    const amount = Math.floor(10 + random() * 9990);
    return `In ${year} the ${pick(PLACES)} ${pick(SUBJECTS)} ${verb} ${amount.toLocaleString('en-GB')} ${unit}, ${pick(CLAUSES)}.`;
  };

  const objects: PdfObject[] = [
    { dict: '<< /Type /Catalog /Pages 2 0 R >>' },
    { dict: '' }, // the page tree, once the pages are numbered
    { dict: '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>' },
    { dict: '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>' },
  ];
  const drawn: string[][] = [];
  const kids: string[] = [];
  for (let page = 1; page <= pages; page++) {
    const heading = `Chapter ${page}: ${pick(TITLES)} of ${pick(PLACES)}`;
    const body: string[] = [];
    while (body.length < LINES_PER_PAGE) {
      // The fact starts a paragraph of its own, halfway down its page.
      if (page === FACT_PAGE && body.length >= LINES_PER_PAGE / 2 && !body.some((line) => line.includes('Kestrel'))) {
        body.push(...wrap(`${FACT} ${sentence()}`));
      }
      body.push(...wrap(Array.from({ length: 3 }, sentence).join(' ')));
    }
    body.length = LINES_PER_PAGE;
    const content = [
      `BT /F2 14 Tf 72 730 Td (${pdfString(heading)}) Tj ET`,
      `BT /F1 ${FONT_SIZE} Tf ${LEADING} TL 72 700 Td`,
      ...body.map((line, i) => `${i === 0 ? '' : 'T* '}(${pdfString(line)}) Tj`),
      'ET',
      `BT /F1 9 Tf 300 40 Td (${page}) Tj ET`,
    ].join('\n');
    const stream = deflateSync(Buffer.from(content, 'latin1'));
    const id = objects.length + 1;
    kids.push(`${id} 0 R`);
    objects.push(
      {
        dict: `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${id + 1} 0 R /Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> >>`,
      },
      { dict: `<< /Length ${stream.length} /Filter /FlateDecode >>`, stream },
    );
    drawn.push([heading, ...body, String(page)]);
  }
  objects[1] = { dict: `<< /Type /Pages /Count ${pages} /Kids [${kids.join(' ')}] >>` };
  return { bytes: pdfOf(objects), pages: drawn, fact: { page: FACT_PAGE, sentence: FACT, question: QUESTION } };
}
