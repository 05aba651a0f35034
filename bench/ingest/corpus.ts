/**
 * The documents of bench/ingest/ingest.ts: the test fixtures that are meant to ingest, and the PDFs it
 * generates (each checked by reading it back with pdf.js).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getDocumentProxy } from 'unpdf';
import { fixed, log, MB } from '../harness/format.ts';
import { type GeneratedPdf, generatePdf } from './pdf-generator.ts';

const FIXTURES = new URL('../../test/fixtures/docs', import.meta.url).pathname;
export const TEXT_PDF = 'generated-text-100p.pdf';
export const LARGE_PDF = 'generated-mixed-50mb.pdf';
export const LARGE_TEXT_PDF = 'generated-text-50mb.pdf';

export interface CorpusFile {
  name: string;
  path: string;
  bytes: Uint8Array;
}

/** Every fixture that is meant to ingest: not the error-path files, not the OCR reference transcription. */
export function fixtureCorpus(): CorpusFile[] {
  const rows = readFileSync(join(FIXTURES, 'MANIFEST.tsv'), 'utf8').trim().split('\n').slice(1);
  const files: CorpusFile[] = [];
  for (const row of rows) {
    const [name, , , , , , , exercises = ''] = row.split('\t');
    if (!name || exercises.includes('error path') || name.endsWith('.groundtruth.txt')) continue;
    const path = join(FIXTURES, name);
    files.push({ name, path, bytes: new Uint8Array(readFileSync(path)) });
  }
  return files;
}

/** Checks that pdf.js reads every page and every word the generator drew on it. */
async function verifyPdf(pdf: GeneratedPdf): Promise<string> {
  const doc = await getDocumentProxy(pdf.bytes.slice());
  if (doc.numPages !== pdf.pages) throw new Error(`generated PDF: unpdf sees ${doc.numPages} pages, expected ${pdf.pages}`);
  let expected = 0;
  let found = 0;
  for (let n = 1; n <= doc.numPages; n++) {
    const page = await doc.getPage(n);
    const content = await page.getTextContent();
    const words = new Map<string, number>();
    for (const item of content.items) {
      if (!('str' in item)) continue;
      for (const word of item.str.split(/\s+/)) if (word) words.set(word, (words.get(word) ?? 0) + 1);
    }
    for (const word of pdf.pageWords[n - 1] ?? []) {
      expected++;
      const left = words.get(word) ?? 0;
      if (left > 0) {
        found++;
        words.set(word, left - 1);
      }
    }
    page.cleanup();
  }
  await doc.destroy();
  if (found !== expected) throw new Error(`generated PDF: unpdf found ${found} of ${expected} drawn words`);
  return `${pdf.pages} pages and all ${expected} words read back by unpdf`;
}

/**
 * Writes the generated PDFs into `dir`: the ~100-page text PDF always, the 50 MB mixed one unless
 * `skipLarge`, the 50 MB text-only one with `text50mb`.
 */
export async function generatePdfs(dir: string, options: { skipLarge: boolean; text50mb: boolean }) {
  log('\n## Generated PDFs');
  const textSpec = { pages: 100, chartEvery: 2, seed: 1 };
  const largeSpec = { pages: 200, photoEvery: 10, chartEvery: 2, seed: 2 };
  const textPdf = generatePdf(textSpec);
  writeFileSync(join(dir, TEXT_PDF), textPdf.bytes);
  log(`${TEXT_PDF}: ${fixed(textPdf.bytes.byteLength / MB, 2)} MB, ${textPdf.charts} vector charts; ${await verifyPdf(textPdf)}`);
  let largeInfo: Record<string, unknown> | null = null;
  if (!options.skipLarge) {
    const large = generatePdf(largeSpec);
    writeFileSync(join(dir, LARGE_PDF), large.bytes);
    largeInfo = {
      bytes: large.bytes.byteLength,
      pages: large.pages,
      photos: large.photos,
      charts: large.charts,
      photoBytes: large.photoBytes,
      check: await verifyPdf(large),
    };
    log(
      `${LARGE_PDF}: ${fixed(large.bytes.byteLength / MB, 2)} MB, ${large.photos} photos ` +
        `(${fixed(large.photoBytes / MB, 1)} MB), ${large.charts} vector charts; ${largeInfo.check}`,
    );
  }

  if (options.text50mb) {
    const text50 = generatePdf({ pages: 2480, chartEvery: 2, seed: 3 });
    writeFileSync(join(dir, LARGE_TEXT_PDF), text50.bytes);
    log(
      `${LARGE_TEXT_PDF}: ${fixed(text50.bytes.byteLength / MB, 2)} MB, ${text50.charts} vector charts; ${await verifyPdf(text50)}`,
    );
  }
  return { textSpec, textPdf, largeInfo };
}
