import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import type { DocType } from '#core/documents/detect-type.ts';
import type { ProbeReady, ProbeResult } from '../../bench/hostile/probe.ts';
import type { UrlProbeResult } from '../../bench/hostile/url-probe.ts';
import { DEFAULT_DOCUMENT_BUDGET, type DocumentBudget, readRange } from '../../workers/ingest/src/pipeline/read-range.ts';
import { HOSTILE_FILES, manyPagesPdf, type RunOutcome, runSteps } from '../support/hostile-files.ts';

/**
 * Every hostile file through the parse step the worker runs (readRange: parse within the
 * document's budget, then chunk), range after range for a PDF. Each must end as its job would:
 * `failed` or `partial` with a plain message, or `succeeded`, and never with more chunks than
 * the budget. How long each takes is bench/hostile/hostile-files.ts's to measure; here the suite's own
 * timeout is the bound, as the unfixed code took from seconds to hours on these.
 */

async function ingest(
  type: DocType,
  bytes: Uint8Array,
  budget: DocumentBudget = DEFAULT_DOCUMENT_BUDGET,
  chunkSize = 1000,
): Promise<RunOutcome> {
  return runSteps(async (fromPage, chunksBefore, decodedBefore) => {
    const range = await readRange(
      { type, bytes, chunkSize, fromPage, before: { chunks: chunksBefore, images: 0, decodedBytes: decodedBefore } },
      budget,
    );
    return {
      chunks: range.chunks.length + range.images.length,
      warnings: range.warnings,
      decodedBytes: range.decodedBytes,
      ...(range.extracted ? {} : { nextPage: (range.lastPage ?? 0) + 1 }),
    };
  });
}

const STREAM_BUDGET = /^The PDF could not be read: its content expands past 16 MB when decompressed$/;
const CHARS = /^The document has more than 16,000,000 characters of text; only the first 16,000,000 were read$/;

const EXPECTED: Record<string, { status: RunOutcome['status']; message?: RegExp; budget?: Partial<DocumentBudget> }> = {
  'xlsx-shared-string': { status: 'partial', message: CHARS },
  'xlsx-header-repeat': { status: 'partial', message: CHARS },
  'xlsx-last-column': { status: 'succeeded' },
  'xlsx-merges': { status: 'succeeded' },
  'md-heading': { status: 'succeeded' },
  'md-table-delimiter': { status: 'succeeded' },
  'md-bold': { status: 'succeeded' },
  'md-links': { status: 'succeeded' },
  'txt-dots': { status: 'succeeded' },
  'docx-deep-nesting': { status: 'failed', message: /^The document is nested more than 256 levels deep and cannot be read$/ },
  'docx-attribute-run': { status: 'succeeded' },
  // The first picture is read; the package's 48 MB are spent before the second.
  'docx-big-images': { status: 'partial', message: /^3 images were not described: the document's contents expand past 48 MB$/ },
  'html-nested-11k': { status: 'succeeded' },
  'html-nested-55k': { status: 'succeeded' },
  'html-unclosed-tags': { status: 'succeeded' },
  'csv-header-repeat': { status: 'partial', message: CHARS },
  'odt-zip-bomb': {
    status: 'failed',
    message: /^The file looks like a zip bomb and was refused: content\.xml would expand \d+ times$/,
  },
  // The chapter declares its 100 MB, so it is left unread; the next chapter is read.
  'epub-zip-bomb': { status: 'partial', message: /^1 chapter is larger than 5 MB of XHTML and was not read$/ },
  'eml-mime-bomb': { status: 'partial', message: /^Parts of the message nested more than 12 deep were not read$/ },
  'eml-20000-attachments': {
    status: 'partial',
    message: /^The message has more than 1000 parts; only the first 1000 were read$/,
  },
  'eml-attached-emails': { status: 'partial', message: /Emails attached more than 3 deep were not read/ },
  'odt-deep-nesting': { status: 'failed', message: /^The document is nested more than 256 levels deep and cannot be read$/ },
  'ods-repeated-cells': { status: 'succeeded' },
  'json-deep-nesting': { status: 'failed', message: /^The JSON is nested more than 64 levels deep and cannot be read$/ },
  'png-pixel-bomb': {
    status: 'failed',
    message: /^The image is 100000 × 100000 pixels; at most 50 megapixels can be read$/,
  },
  'pdf-flate-bomb': { status: 'failed', message: STREAM_BUDGET },
  // However the filter is hidden, pdf.js's own decoding is what is counted.
  'pdf-filter-name-escape': { status: 'failed', message: STREAM_BUDGET },
  'pdf-filter-indirect': { status: 'failed', message: STREAM_BUDGET },
  'pdf-filter-comment': { status: 'failed', message: STREAM_BUDGET },
  'pdf-rc4-empty-password': { status: 'failed', message: STREAM_BUDGET },
  'pdf-contents-8x15mb': {
    status: 'failed',
    message: /^The PDF could not be read: its content expands past 48 MB when decompressed$/,
  },
  // The cap lowered from 2,000 pages so the suite reads 3 ranges rather than 20; bench/hostile/hostile-files.ts runs the default.
  'pdf-20000-pages': {
    status: 'partial',
    message: /^Only the first 300 of the PDF's 20000 pages were read$/,
    budget: { maxPages: 300 },
  },
};

/** A message a user may read: a sentence of ours, not an exception's text or a stack. */
function expectPlain(message: string) {
  expect(message).not.toMatch(/Error|undefined|\n|\bat \S+ \(|\.ts:\d/);
}

describe('hostile files through the parse step', () => {
  const files = HOSTILE_FILES.filter((file) => !file.benchOnly);

  it('covers every file the suite runs', () => {
    expect(files.map((file) => file.name).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(files.map((file) => [file.name, file] as const))(
    '%s ends as expected, within the budget',
    async (name, file) => {
      const expected = EXPECTED[name]!;
      const outcome = await ingest(file.type, file.bytes(), { ...DEFAULT_DOCUMENT_BUDGET, ...expected.budget });
      expect(outcome.status).toBe(expected.status);
      if (expected.message) expect(outcome.message).toMatch(expected.message);
      expectPlain(outcome.message);
      expect(outcome.chunks).toBeLessThanOrEqual(DEFAULT_DOCUMENT_BUDGET.maxChunks);
    },
    120_000,
  );
});

describe('the document budget', () => {
  const sharedString = HOSTILE_FILES.find((file) => file.name === 'xlsx-shared-string')!;

  it('stops at the chunk budget, saying so', async () => {
    const outcome = await ingest('xlsx', sharedString.bytes(), { ...DEFAULT_DOCUMENT_BUDGET, maxChunks: 500 });
    expect(outcome).toMatchObject({ status: 'partial', chunks: 500 });
    expect(outcome.message).toContain('The document makes more than 500 chunks; only the first 500 were kept');
  });

  it('counts every use of a shared string against the characters', async () => {
    const outcome = await ingest('xlsx', sharedString.bytes(), { ...DEFAULT_DOCUMENT_BUDGET, maxChars: 1_000_000 });
    expect(outcome.status).toBe('partial');
    expect(outcome.message).toBe('The document has more than 1,000,000 characters of text; only the first 1,000,000 were read');
    // What was read (the first row: 20 cells of the 45,000-character string) in chunks of at most 1,000.
    expect(outcome.chunks).toBeGreaterThan(800);
    expect(outcome.chunks).toBeLessThanOrEqual(1_200);
  });

  describe('across the page ranges of a PDF', () => {
    const pdf = manyPagesPdf(1_000);

    it('reads no page past the cap, and warns once', async () => {
      const outcome = await ingest('pdf', pdf, { ...DEFAULT_DOCUMENT_BUDGET, maxPages: 150 });
      expect(outcome).toMatchObject({
        status: 'partial',
        steps: 2,
        message: "Only the first 150 of the PDF's 1000 pages were read",
      });
    });

    it('stops queueing ranges once the chunks are used up', async () => {
      const outcome = await ingest('pdf', pdf, { ...DEFAULT_DOCUMENT_BUDGET, maxChunks: 50 }, 100);
      expect(outcome).toMatchObject({ status: 'partial', steps: 2, chunks: 50 });
      expect(outcome.message).toBe('The document makes more than 50 chunks; only the first 50 were kept');
    });

    it('counts the characters of earlier ranges', async () => {
      const outcome = await ingest('pdf', pdf, { ...DEFAULT_DOCUMENT_BUDGET, maxChars: 5_000 }, 100);
      expect(outcome.status).toBe('partial');
      expect(outcome.steps).toBe(2);
      expect(outcome.message).toBe('The document has more than 5,000 characters of text; only the first 5,000 were read');
    });

    it('reads a PDF within its budget whole', async () => {
      const outcome = await ingest('pdf', manyPagesPdf(250));
      expect(outcome).toMatchObject({ status: 'succeeded', steps: 3, message: '' });
    });
  });
});

/**
 * Memory, measured as the bench measures it: each file through the parse step in a fresh Node
 * process (bench/hostile/probe.ts), images handed over as the worker stores them, and the
 * kernel's peak resident set above the process's own once the parsers are loaded. In-process
 * sampling misses peaks inside synchronous code, and this worker's heap already holds earlier
 * tests. Each of these took 150 to 460 MB before the parse step was bounded.
 */
describe('peak memory of the parse step, in a fresh process', () => {
  const REPO = fileURLToPath(new URL('../../', import.meta.url));
  const run = promisify(execFile);
  const dir = mkdtempSync(join(tmpdir(), 'hostile-memory-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const LIMIT = 100 * 1024 * 1024;

  async function probe(name: string): Promise<{ ready: ProbeReady; result: ProbeResult }> {
    const file = HOSTILE_FILES.find((f) => f.name === name)!;
    const path = join(dir, `${name}.${file.type}`);
    writeFileSync(path, file.bytes());
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', 'bench/hostile/probe.ts', '--file', path, '--type', file.type],
      { cwd: REPO, maxBuffer: 1024 * 1024 },
    );
    const [ready, result] = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    return { ready, result };
  }

  it.each([
    ['docx-million-runs', 'partial'],
    ['docx-long-run', 'partial'],
    ['pptx-long-run', 'partial'],
    ['docx-big-images', 'partial'],
    ['html-200k-paragraphs', 'succeeded'],
    ['txt-one-paragraph', 'succeeded'],
    ['pdf-flate-bomb', 'failed'],
    ['pdf-filter-indirect', 'failed'],
    ['pdf-rc4-empty-password', 'failed'],
    ['pdf-contents-8x15mb', 'failed'],
  ])(
    '%s stays under 100 MB',
    async (name, status) => {
      const { ready, result } = await probe(name);
      const peak = result.peakRss - ready.rss;
      console.log(`${name}: peak ${(peak / 2 ** 20).toFixed(1)} MiB above the loaded parsers, ${result.chunks} chunks`);
      expect(result.status).toBe(status);
      expect(peak).toBeLessThan(LIMIT);
    },
    60_000,
  );

  it('holds a fetched page once, not twice, with or without a length, compressed or not', async () => {
    const read = async (...flags: string[]) => {
      const { stdout } = await run(
        process.execPath,
        ['--expose-gc', '--import', 'tsx', 'bench/hostile/url-probe.ts', '--mb', '40', ...flags],
        { cwd: REPO },
      );
      return JSON.parse(stdout.trim().split('\n').pop()!) as UrlProbeResult;
    };
    for (const [what, flags] of [
      ['of declared length', []],
      ['sent in chunks', ['--chunked']],
      ['sent compressed', ['--gzip']],
    ] as const) {
      // A high-water mark is only ever pushed up by noise (once, in a full CI run, 1.44 times the page
      // against 1.07-1.19 in 40 runs here, alone, beside busy loops or six at once), so a peak over the line
      // is measured once more in a fresh process and the lower one counts.
      const first = await read(...flags);
      const again = first.peakBytes < 1.4 * first.bodyBytes ? first : await read(...flags);
      const page = again.peakBytes < first.peakBytes ? again : first;
      if (page !== first) console.log(`a 40 MB page ${what}: ${(first.peakBytes / 2 ** 20).toFixed(1)} MiB at first`);
      console.log(`a 40 MB page ${what}: peak ${(page.peakBytes / 2 ** 20).toFixed(1)} MiB`);
      expect(page.readBytes).toBe(page.bodyBytes);
      // The pieces joined at the end held the page twice (2.1 times its size, measured).
      expect(page.peakBytes, what).toBeLessThan(1.4 * page.bodyBytes);
    }
  }, 60_000);
});
