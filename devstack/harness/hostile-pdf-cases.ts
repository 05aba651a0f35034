/** The PDFs of the hostile set (hostile-files.ts lists them with the rest), kept apart to keep each file short. */
import { flateBombPdf, manyPagesPdf } from './hostile-builders.ts';
import type { HostileFile } from './hostile-files.ts';
import {
  commentedFilterPdf,
  contentsArrayPdf,
  indirectFilterPdf,
  manyHeavyPagesPdf,
  nameEscapePdf,
  rc4EncryptedPdf,
} from './hostile-pdfs.ts';

export const HOSTILE_PDFS: HostileFile[] = [
  {
    name: 'pdf-flate-bomb',
    type: 'pdf',
    what: 'one page whose content stream inflates to 200 MB of spaces (200 KB)',
    bytes: () => flateBombPdf(200),
  },
  {
    name: 'pdf-20000-pages',
    type: 'pdf',
    what: '20,000 pages (3 MB): 200 extract steps of 100 pages',
    bytes: () => manyPagesPdf(20_000),
  },
  // The second review's PDFs (issue 21): each hides a 200 MB flate bomb from a reader of the raw bytes.
  {
    name: 'pdf-filter-name-escape',
    type: 'pdf',
    what: 'a 200 MB bomb behind `/Filter /#46lateDecode` (200 KB)',
    bytes: () => nameEscapePdf(200),
  },
  {
    name: 'pdf-filter-indirect',
    type: 'pdf',
    what: 'a 200 MB bomb behind `/Filter 6 0 R` (200 KB)',
    bytes: () => indirectFilterPdf(200),
  },
  {
    name: 'pdf-filter-comment',
    type: 'pdf',
    what: 'a 200 MB bomb behind comments after `/Filter` and before `stream` (200 KB)',
    bytes: () => commentedFilterPdf(200),
  },
  {
    name: 'pdf-rc4-empty-password',
    type: 'pdf',
    what: 'a 200 MB bomb in an RC4-encrypted file with an empty user password (200 KB)',
    bytes: () => rc4EncryptedPdf(200),
  },
  {
    name: 'pdf-contents-8x15mb',
    type: 'pdf',
    what: 'one page whose /Contents is 8 streams of 15 MB each (124 KB)',
    bytes: () => contentsArrayPdf(8, 15),
  },
  {
    name: 'pdf-40-pages-of-15mb',
    type: 'pdf',
    what: '40 pages of a 15 MB content stream each, every one within the page budget (610 KB)',
    bytes: () => manyHeavyPagesPdf(40, 15),
    benchOnly: true,
  },
];
