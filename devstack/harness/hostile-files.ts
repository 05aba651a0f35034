import {
  docxWithBigImages,
  epubBook,
  inlineRows,
  LONG_RUN,
  manyPartsEmail,
  NESTED_NAMES,
  nestedMultipartEmail,
  odfDocument,
  pngBomb,
  sharedRows,
  utf8,
  withLongRun,
  words,
} from './hostile-builders.ts';
import { docx, pptx, xlsx } from './ooxml-files.ts';
import { seededRandom } from './seeded-random.ts';

export * from './hostile-builders.ts';
export * from './hostile-steps.ts';

import { HOSTILE_PDFS } from './hostile-pdf-cases.ts';

/**
 * The document types of the set. Each is one of the product's (`DocType` in src/core/contracts/doc-types.ts), which
 * the devstack may not import; the unit suite and the benchmarks hand it to the parsers, which type-check it there.
 */
const HOSTILE_TYPES = [
  'csv',
  'docx',
  'eml',
  'epub',
  'html',
  'json',
  'jsonl',
  'md',
  'ods',
  'odt',
  'pdf',
  'png',
  'pptx',
  'txt',
  'xlsx',
] as const;
export type HostileType = (typeof HOSTILE_TYPES)[number];

export interface HostileFile {
  name: string;
  type: HostileType;
  /** What it attacks, for the benchmark's table. */
  what: string;
  /** Generated on demand: some are megabytes. */
  bytes(): Uint8Array;
  /** Too large to generate in the unit suite; the benchmark runs it. */
  benchOnly?: boolean;
}

export const HOSTILE_FILES: HostileFile[] = [
  {
    name: 'xlsx-shared-string',
    type: 'xlsx',
    what: 'one 50,000-character shared string in each of 60,000 cells (3 G characters)',
    bytes: () =>
      xlsx([{ name: 'S', rows: sharedRows(3_000, 20) }], {
        sharedStrings: [words(7_000), ...Array.from({ length: 20 }, (_, c) => `Column ${c + 1}`)],
      }),
  },
  {
    name: 'xlsx-header-repeat',
    type: 'xlsx',
    what: 'a header of 20 cells of 10,000 characters over 5,000 one-character rows',
    bytes: () =>
      xlsx([
        {
          name: 'S',
          rows: inlineRows(5_000, (r) =>
            r === 1
              ? Array.from({ length: 20 }, (_, c): [string, string] => [String.fromCharCode(65 + c), `h${c} ${words(1_400)}`])
              : Array.from({ length: 20 }, (_, c): [string, string] => [String.fromCharCode(65 + c), 'x']),
          ),
        },
      ]),
  },
  {
    name: 'xlsx-last-column',
    type: 'xlsx',
    what: '30,000 rows with one cell each, in the last column (XFD)',
    bytes: () => xlsx([{ name: 'S', rows: inlineRows(30_000, (r) => [['XFD', `v${r}`]]) }]),
  },
  {
    name: 'xlsx-merges',
    type: 'xlsx',
    what: '10,000 merged ranges and 50,000 rows: every row looked at every range',
    bytes: () =>
      xlsx([
        {
          name: 'S',
          rows: inlineRows(50_000, (r) => [
            ['A', `a${r}`],
            ['B', `b${r}`],
          ]),
          tail: `<mergeCells>${Array.from({ length: 10_000 }, (_, i) => `<mergeCell ref="C${2 * i + 1}:C${2 * i + 2}"/>`).join('')}</mergeCells>`,
        },
      ]),
  },
  {
    name: 'md-heading',
    type: 'md',
    what: 'a 5 KB heading line of spaces that the heading regex cannot match',
    bytes: () => utf8(`# ${' '.repeat(5_000)}\u2028\n\nBody.`),
  },
  {
    name: 'md-table-delimiter',
    type: 'md',
    what: 'a table row, then 50,000 spaces where the delimiter row belongs',
    bytes: () => utf8(`a | b\n-${' '.repeat(50_000)}x\n`),
  },
  {
    name: 'md-bold',
    type: 'md',
    what: '`**a ` 40,000 times: bold markers with no closing partner',
    bytes: () => utf8('**a '.repeat(40_000)),
  },
  {
    name: 'md-links',
    type: 'md',
    what: '`[a](` 20,000 times, and 50,000 `[`: link brackets with no partner',
    bytes: () => utf8(`${'[a]('.repeat(20_000)}\n\n${'['.repeat(50_000)}`),
  },
  {
    name: 'md-line-4mb',
    type: 'md',
    what: 'one line of 4 MB without a space (it was cut in quadratic time)',
    bytes: () => utf8('a'.repeat(4 * 2 ** 20)),
    benchOnly: true,
  },
  {
    name: 'md-line-16mb',
    type: 'md',
    what: 'one line of 16 MB without a space',
    bytes: () => utf8('a'.repeat(16 * 2 ** 20)),
    benchOnly: true,
  },
  {
    name: 'txt-dots',
    type: 'txt',
    what: 'a 50 KB run of dots (the sentence splitter)',
    bytes: () => utf8(`Start ${'.'.repeat(50_000)}`),
  },
  {
    name: 'docx-deep-nesting',
    type: 'docx',
    what: 'elements nested 200,000 deep (the namespace lookup walked them all)',
    bytes: () => {
      // Element names drawn at random, so the part compresses like a real one and passes the zip-bomb check.
      const random = seededRandom(9);
      const names = Array.from({ length: 200_000 }, () => NESTED_NAMES[Math.floor(random() * NESTED_NAMES.length)]);
      const open = names.map((name) => `<${name}>`).join('');
      const close = names
        .reverse()
        .map((name) => `</${name}>`)
        .join('');
      return docx(`${open}${close}<w:p><w:r><w:t>After</w:t></w:r></w:p>`);
    },
  },
  {
    name: 'docx-attribute-run',
    type: 'docx',
    what: 'a tag with a 100,000-character run and no attribute value',
    bytes: () => docx(`<w:p ${'a'.repeat(100_000)}><w:r><w:t>Text</w:t></w:r></w:p>`),
  },
  {
    name: 'docx-million-runs',
    type: 'docx',
    what: 'one paragraph of 1,200,000 runs (a tree of millions of nodes)',
    bytes: () => {
      const random = seededRandom(10);
      const runs = Array.from({ length: 1_200_000 }, () => `<w:r><w:t>${random() < 0.5 ? 'a' : 'b'}</w:t></w:r>`);
      return docx(`<w:p>${runs.join('')}</w:p>`);
    },
    benchOnly: true,
  },
  {
    name: 'docx-long-run',
    type: 'docx',
    what: 'one paragraph of one text run of 16.8 M characters (7.1 MB), past the 16 M budget',
    bytes: () =>
      withLongRun(docx(`<w:p><w:r><w:t xml:space="preserve">${LONG_RUN}</w:t></w:r></w:p>`), 'word/document.xml', 16 * 2 ** 20),
    benchOnly: true,
  },
  {
    name: 'pptx-long-run',
    type: 'pptx',
    what: 'a slide of one text run of 16.8 M characters (7.1 MB)',
    bytes: () =>
      withLongRun(
        pptx([{ shapes: `<p:sp><p:txBody><a:p><a:r><a:t>${LONG_RUN}</a:t></a:r></a:p></p:txBody></p:sp>` }]),
        'ppt/slides/slide1.xml',
        16 * 2 ** 20,
      ),
    benchOnly: true,
  },
  {
    name: 'docx-big-images',
    type: 'docx',
    what: 'four pictures that inflate to 30 MB each (770 KB)',
    bytes: () => docxWithBigImages(4, 30),
  },
  {
    name: 'html-nested-11k',
    type: 'html',
    what: '1,000 nested divs (11 KB), through Readability',
    bytes: () => utf8(`<html><body>${'<div>'.repeat(1_000)}Deep text.${'</div>'.repeat(1_000)}</body></html>`),
  },
  {
    name: 'html-nested-55k',
    type: 'html',
    what: '5,000 nested divs (55 KB)',
    bytes: () => utf8(`<html><body>${'<div>'.repeat(5_000)}Deep text.${'</div>'.repeat(5_000)}</body></html>`),
  },
  {
    name: 'html-unclosed-tags',
    type: 'html',
    what: '`<html ` 100,000 times with no `>` (the page-wrapping regex)',
    bytes: () => utf8(`<p>Text</p>${'<html '.repeat(100_000)}`),
  },
  {
    name: 'html-200k-paragraphs',
    type: 'html',
    what: 'a 4 MB page of 125,000 paragraphs',
    bytes: () => utf8(`<html><body>${'<p>Some words in a paragraph.</p>'.repeat(125_000)}</body></html>`),
    benchOnly: true,
  },
  {
    name: 'png-pixel-bomb',
    type: 'png',
    what: 'a PNG declaring 100,000 × 100,000 pixels over 4 MB of zeros (4 KB)',
    bytes: () => pngBomb(100_000, 100_000),
  },
  {
    name: 'json-deep-nesting',
    type: 'json',
    what: '1,000,000 nested arrays (2 MB)',
    bytes: () => utf8(`${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`),
  },
  {
    name: 'json-5mb-records',
    type: 'json',
    what: 'an array of 120,000 small records (4.9 MB), parsed whole',
    bytes: () => utf8(`[${Array.from({ length: 120_000 }, (_, i) => `{"id":${i},"name":"item ${i}","ok":true}`).join(',')}]`),
    benchOnly: true,
  },
  {
    name: 'jsonl-300k-records',
    type: 'jsonl',
    what: '300,000 records of one line each (15 MB), past the 8 MB read',
    bytes: () => utf8(Array.from({ length: 300_000 }, (_, i) => `{"id":${i},"name":"record ${i}","tags":["a","b"]}\n`).join('')),
    benchOnly: true,
  },
  {
    name: 'odt-zip-bomb',
    type: 'odt',
    what: 'a content.xml that inflates to 100 MB of spaces (100 KB)',
    bytes: () => odfDocument('text', '<office:text><text:p>Before the bomb.@@</text:p></office:text>', 100),
  },
  {
    name: 'epub-zip-bomb',
    type: 'epub',
    what: 'a chapter that inflates to 100 MB of spaces (100 KB)',
    bytes: () => epubBook(['<h1>Before the bomb</h1><p>Text.@@</p>', '<p>After.</p>'], 100),
  },
  {
    name: 'epub-2000-chapters',
    type: 'epub',
    what: '1,990 chapters of 1,000 nested divs each, through the HTML reader',
    bytes: () =>
      epubBook(Array.from({ length: 1_990 }, (_, i) => `${'<div>'.repeat(1_000)}Chapter ${i}.${'</div>'.repeat(1_000)}`)),
    benchOnly: true,
  },
  {
    name: 'eml-mime-bomb',
    type: 'eml',
    what: '10,000 multiparts nested one inside the other (690 KB)',
    bytes: () => nestedMultipartEmail(10_000),
  },
  {
    name: 'eml-20000-attachments',
    type: 'eml',
    what: 'one multipart of 20,000 text attachments (2 MB)',
    bytes: () => manyPartsEmail(20_000),
  },
  {
    name: 'eml-attached-emails',
    type: 'eml',
    what: 'an email attached inside an email, 6 deep, base64 each time',
    bytes: () => {
      let mail = utf8('From: a@example.com\r\nTo: b@example.com\r\nSubject: Innermost\r\n\r\nThe innermost text.\r\n');
      for (let i = 0; i < 6; i++) {
        const encoded = Buffer.from(mail).toString('base64');
        mail = utf8(
          `From: a@example.com\r\nTo: b@example.com\r\nSubject: Level ${i}\r\nContent-Type: multipart/mixed; boundary="z"\r\n\r\n--z\r\nContent-Type: text/plain\r\n\r\nLevel ${i}.\r\n--z\r\nContent-Type: message/rfc822; name="m${i}.eml"\r\nContent-Disposition: attachment; filename="m${i}.eml"\r\nContent-Transfer-Encoding: base64\r\n\r\n${encoded}\r\n--z--\r\n`,
        );
      }
      return mail;
    },
  },
  {
    name: 'odt-deep-nesting',
    type: 'odt',
    what: '30,000 nested sections (a content.xml of 840 KB)',
    bytes: () =>
      odfDocument(
        'text',
        `<office:text>${'<text:section>'.repeat(30_000)}<text:p>Deep.</text:p>${'</text:section>'.repeat(30_000)}</office:text>`,
      ),
  },
  {
    name: 'ods-repeated-cells',
    type: 'ods',
    what: 'a row of 16,384 repeated cells repeated 1,048,576 times, and a million blank rows',
    bytes: () =>
      odfDocument(
        'spreadsheet',
        '<office:spreadsheet><table:table table:name="S"><table:table-row><table:table-cell><text:p>Name</text:p></table:table-cell><table:table-cell><text:p>Value</text:p></table:table-cell></table:table-row>' +
          '<table:table-row table:number-rows-repeated="1048576"><table:table-cell table:number-columns-repeated="16384"><text:p>x</text:p></table:table-cell></table:table-row>' +
          '<table:table-row table:number-rows-repeated="1000000"><table:table-cell table:number-columns-repeated="16384"/></table:table-row></table:table></office:spreadsheet>',
      ),
  },
  {
    name: 'csv-header-repeat',
    type: 'csv',
    what: 'a header of 50 fields of 2,000 characters over 20,000 rows',
    bytes: () =>
      utf8(
        `${Array.from({ length: 50 }, (_, c) => `h${c} ${words(280)}`).join(',')}\n${`${Array(50).fill('1').join(',')}\n`.repeat(20_000)}`,
      ),
  },
  {
    name: 'csv-commas',
    type: 'csv',
    what: 'one record of 15,000,000 commas',
    bytes: () => utf8(`a,b\n${','.repeat(15_000_000)}\n`),
    benchOnly: true,
  },
  {
    name: 'txt-one-paragraph',
    type: 'txt',
    what: 'an 8 MB text file of one paragraph',
    bytes: () => utf8(`${'Word and more words. '.repeat(400_000)}`),
    benchOnly: true,
  },
  ...HOSTILE_PDFS,
];
