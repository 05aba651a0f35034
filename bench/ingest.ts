/**
 * Ingestion benchmark: parse+chunk throughput in-process, end-to-end ingestion through the devstack and
 * both workers, and the memory one extract invocation needs. See docs/benchmarks.md, "Ingestion".
 *
 *   npx tsx bench/ingest.ts [--repeat 5] [--runs 3] [--skip-large] [--text-50mb] [--skip-e2e] [--out results.json]
 *
 * --repeat   measured parse+chunk passes over the corpus (after one warm-up pass); medians are reported
 * --runs     end-to-end ingestions of the ~100-page text PDF; the median is reported
 * --skip-large  no 50 MB PDF (saves about a minute and a half)
 * --text-50mb   also probe the memory of a text-only 50 MB PDF (2,480 pages; adds about two minutes)
 * --skip-e2e    no devstack, no workers: parse+chunk and memory only
 * --keep-pdfs DIR  write the generated PDFs there (and keep them)
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { getDocumentProxy } from 'unpdf';
import { typeFromExtension } from '#core/documents/detect-type.ts';
import { chunkBlocks } from '../workers/ingest/src/chunking/chunk-blocks.ts';
import { parseDocument } from '../workers/ingest/src/parsers/index.ts';
import type { ProbeResult } from './extract-probe.ts';
import {
  createCollection,
  type IngestRun,
  ingestAll,
  type Job,
  signUp,
  startBenchStack,
  statusBytes,
  watchRss,
  workerRuntimePid,
} from './ingest-e2e.ts';
import { type GeneratedPdf, generatePdf } from './pdf-generator.ts';

const { values: flags } = parseArgs({
  options: {
    repeat: { type: 'string', default: '5' },
    runs: { type: 'string', default: '3' },
    'skip-large': { type: 'boolean', default: false },
    'text-50mb': { type: 'boolean', default: false },
    'skip-e2e': { type: 'boolean', default: false },
    out: { type: 'string' },
    'keep-pdfs': { type: 'string' },
  },
});
const repeat = Number(flags.repeat);
const runs = Number(flags.runs);
if (!(repeat >= 1) || !(runs >= 1)) throw new Error('--repeat and --runs must be at least 1');

const root = new URL('..', import.meta.url).pathname;
const FIXTURES = new URL('../test/fixtures/docs', import.meta.url).pathname;
const CHUNK_SIZE = 1000;
const TEXT_PDF = 'generated-text-100p.pdf';
const LARGE_PDF = 'generated-mixed-50mb.pdf';
const LARGE_TEXT_PDF = 'generated-text-50mb.pdf';

const MB = 1e6;
const MiB = 2 ** 20;
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};
const fixed = (n: number, digits = 1) => n.toFixed(digits);
const mib = (bytes: number) => fixed(bytes / MiB);
const log = (line = '') => console.log(line);

interface CorpusFile {
  name: string;
  path: string;
  bytes: Uint8Array;
}

/** Every fixture that is meant to ingest: not the error-path files, not the OCR reference transcription. */
function fixtureCorpus(): CorpusFile[] {
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

interface ParseStats {
  name: string;
  bytes: number;
  blocks: number;
  textChunks: number;
  images: number;
  ms: number[];
}

/** parseDocument + chunkBlocks over the corpus, one warm-up pass and `repeat` measured ones. */
async function parseThroughput(corpus: CorpusFile[]) {
  const stats: ParseStats[] = corpus.map((f) => ({
    name: f.name,
    bytes: f.bytes.byteLength,
    blocks: 0,
    textChunks: 0,
    images: 0,
    ms: [],
  }));
  const passes: number[] = [];
  for (let pass = 0; pass <= repeat; pass++) {
    let total = 0;
    for (const [i, file] of corpus.entries()) {
      const type = typeFromExtension(file.name);
      if (!type) throw new Error(`no type for ${file.name}`);
      const start = performance.now();
      const parsed = await parseDocument(type, file.bytes);
      const chunks = chunkBlocks(parsed.blocks, { chunkSize: CHUNK_SIZE });
      const ms = performance.now() - start;
      total += ms;
      const s = stats[i] as ParseStats;
      if (pass > 0) s.ms.push(ms);
      Object.assign(s, { blocks: parsed.blocks.length, textChunks: chunks.length, images: parsed.images.length });
    }
    if (pass > 0) passes.push(total);
    log(`  pass ${pass === 0 ? 'warm-up' : pass}: ${fixed(total / 1000, 2)} s`);
  }
  return { stats, passMs: median(passes), passes };
}

function runProbe(path: string): Promise<ProbeResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', join(root, 'bench/extract-probe.ts'), path], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      const line = out.trim().split('\n').at(-1) ?? '';
      if (code !== 0 || !line.startsWith('{'))
        return reject(new Error(`probe of ${path} exited with ${code}\n${err.slice(-4000)}`));
      resolve(JSON.parse(line) as ProbeResult);
    });
  });
}

function summariseRun(run: IngestRun) {
  const bytes = run.files.reduce((sum, f) => sum + f.bytes, 0);
  const chunks = run.files.reduce((sum, f) => sum + f.job.chunks_total, 0);
  const statuses = run.files.map((f) => f.job.status);
  return {
    files: run.files.length,
    bytes,
    chunks,
    wallS: run.wallMs / 1000,
    mbPerS: bytes / MB / (run.wallMs / 1000),
    chunksPerS: chunks / (run.wallMs / 1000),
    succeeded: statuses.filter((s) => s === 'succeeded').length,
    notSucceeded: run.files
      .filter((f) => f.job.status !== 'succeeded')
      .map((f) => `${f.name}: ${f.job.status} ${f.job.error_message ?? ''}`),
  };
}

interface Segment {
  label: string;
  run: IngestRun;
  summary: ReturnType<typeof summariseRun>;
  /**
   * Ingest workerd VmRSS: idle (after start-up, before any job), at the segment's start, its peak in the
   * segment, and its peak until the extract step saved its rows (single-file segments).
   */
  rss: { idle: number; start: number; peak: number; extractPeak: number | null; kernel: boolean } | null;
}

async function endToEnd(corpus: CorpusFile[], withImages: Set<string>, textPdf: CorpusFile, large: CorpusFile | null) {
  log('\n## End to end (devstack + API worker + ingest worker under wrangler dev)');
  const startedAt = performance.now();
  const stack = await startBenchStack();
  try {
    log(`stack up in ${fixed((performance.now() - startedAt) / 1000)} s; embeddings: ${stack.embeddings}`);
    const runtime = workerRuntimePid(stack.ingestWranglerPid);
    if (!runtime) log('  (no workerd process found under the ingest wrangler: RSS not sampled)');
    const idle = runtime ? statusBytes(runtime.pid, 'VmRSS') : 0;
    const token = await signUp(stack);

    const warmCollection = await createCollection(stack, token, 'bench warm-up');
    const warm = corpus.filter((f) => f.name === 'handbook-1p.docx' || f.name === 'multi-column-2p.pdf');
    const warmRun = await ingestAll(stack, token, warmCollection, warm);
    log(`warm-up (${warm.map((f) => f.name).join(', ')}): ${fixed(warmRun.wallMs / 1000, 2)} s`);

    const segment = async (label: string, files: CorpusFile[]): Promise<Segment> => {
      const collection = await createCollection(stack, token, `bench ${label}`);
      const watch = runtime ? watchRss(runtime.pid) : undefined;
      let extractPeak: number | null = null;
      // Rows exist (chunks_total > 0) once the extract step is through; later steps only embed.
      const onPoll = (_name: string, job: Job) => {
        if (extractPeak === null && job.chunks_total > 0 && watch) extractPeak = watch.mark();
      };
      const run = await ingestAll(stack, token, collection, files, { onPoll: files.length === 1 ? onPoll : undefined });
      const window = watch?.stop();
      const rss = window
        ? {
            idle,
            start: window.start,
            peak: Math.max(window.sampledPeak, window.kernelPeak ?? 0),
            extractPeak,
            kernel: window.kernelPeak !== null,
          }
        : null;
      return { label, run, summary: summariseRun(run), rss };
    };
    // The text PDF first, while the worker's memory is closest to idle.
    const single: Segment[] = [];
    for (let i = 0; i < runs; i++) single.push(await segment(`${textPdf.name} #${i + 1}`, [textPdf]));
    const noOcr = await segment(
      'corpus without OCR',
      corpus.filter((f) => !withImages.has(f.name)),
    );
    const full = await segment('full corpus', corpus);
    const largeRun = large ? await segment(large.name, [large]) : null;
    return {
      embeddings: stack.embeddings,
      workerd: runtime,
      idleRss: idle,
      warmUpS: warmRun.wallMs / 1000,
      noOcr,
      full,
      single,
      large: largeRun,
    };
  } finally {
    await stack.stop();
  }
}

async function main() {
  const machine = {
    nproc: availableParallelism(),
    cpu: cpus()[0]?.model ?? 'unknown',
    ramGiB: Number((totalmem() / 2 ** 30).toFixed(1)),
    node: process.version,
    loadAtStart: loadavg().map((n) => Number(n.toFixed(2))),
  };
  log(`# Ingestion benchmark\nmachine: ${JSON.stringify(machine)}`);
  const benchStart = performance.now();
  const dir = flags['keep-pdfs'] ?? (await mkdtemp(join(tmpdir(), 'rag-bench-pdfs-')));
  mkdirSync(dir, { recursive: true });

  log('\n## Generated PDFs');
  const textSpec = { pages: 100, chartEvery: 2, seed: 1 };
  const largeSpec = { pages: 200, photoEvery: 10, chartEvery: 2, seed: 2 };
  const textPdf = generatePdf(textSpec);
  writeFileSync(join(dir, TEXT_PDF), textPdf.bytes);
  log(`${TEXT_PDF}: ${fixed(textPdf.bytes.byteLength / MB, 2)} MB, ${textPdf.charts} vector charts; ${await verifyPdf(textPdf)}`);
  let largeInfo: Record<string, unknown> | null = null;
  if (!flags['skip-large']) {
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

  if (flags['text-50mb']) {
    const text50 = generatePdf({ pages: 2480, chartEvery: 2, seed: 3 });
    writeFileSync(join(dir, LARGE_TEXT_PDF), text50.bytes);
    log(
      `${LARGE_TEXT_PDF}: ${fixed(text50.bytes.byteLength / MB, 2)} MB, ${text50.charts} vector charts; ${await verifyPdf(text50)}`,
    );
  }

  const fixtures = fixtureCorpus();
  const textFile: CorpusFile = { name: TEXT_PDF, path: join(dir, TEXT_PDF), bytes: textPdf.bytes };
  const corpus = [...fixtures, textFile];
  const corpusBytes = corpus.reduce((sum, f) => sum + f.bytes.byteLength, 0);

  log(`\n## Parse + chunk in-process (Node ${process.version}, chunk size ${CHUNK_SIZE}), ${repeat} passes after a warm-up`);
  const parse = await parseThroughput(corpus);
  const parseChunks = parse.stats.reduce((sum, s) => sum + s.textChunks + s.images, 0);
  log('\n| file | KB | blocks | text chunks | images | median ms | MB/s |\n|---|---:|---:|---:|---:|---:|---:|');
  for (const s of parse.stats) {
    const ms = median(s.ms);
    log(
      `| ${s.name} | ${fixed(s.bytes / 1000, 0)} | ${s.blocks} | ${s.textChunks} | ${s.images} | ${fixed(ms)} | ${fixed(s.bytes / MB / (ms / 1000), 2)} |`,
    );
  }
  const parseSummary = {
    files: corpus.length,
    bytes: corpusBytes,
    chunks: parseChunks,
    medianPassS: parse.passMs / 1000,
    mbPerS: corpusBytes / MB / (parse.passMs / 1000),
    chunksPerS: parseChunks / (parse.passMs / 1000),
  };
  log(
    `| **corpus (${corpus.length} files)** | ${fixed(corpusBytes / 1000, 0)} | | | | ${fixed(parse.passMs)} | ${fixed(parseSummary.mbPerS, 2)} |`,
  );
  log(
    `corpus: ${fixed(parseSummary.mbPerS, 2)} MB/s, ${fixed(parseSummary.chunksPerS, 0)} chunks/s (text chunks + image chunks)`,
  );

  log('\n## Memory of one extract invocation (fresh Node process per file, --expose-gc, sampled every 5 ms)');
  const largestFixture = [...fixtures].sort((a, b) => b.bytes.byteLength - a.bytes.byteLength)[0] as CorpusFile;
  const probeFiles = [
    largestFixture.path,
    join(dir, TEXT_PDF),
    ...(flags['skip-large'] ? [] : [join(dir, LARGE_PDF)]),
    ...(flags['text-50mb'] ? [join(dir, LARGE_TEXT_PDF)] : []),
  ];
  const probes: ProbeResult[] = [];
  for (const path of probeFiles) probes.push(await runProbe(path));
  log(
    '\n| file | MB | parse s | peak heap+AB growth | peak heap growth | peak AB growth | retained after GC | abs. peak heap+AB | peak RSS growth | max sample gap |' +
      '\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const p of probes) {
    const base = p.baseline;
    log(
      `| ${p.file.split('/').at(-1)} | ${fixed(p.bytes / MB, 2)} | ${fixed(p.ms.parse / 1000, 2)} | ` +
        `${mib(p.peak.heapPlusArrayBuffers - base.heapUsed - base.arrayBuffers)} MiB | ${mib(p.peak.heapUsed - base.heapUsed)} MiB | ` +
        `${mib(p.peak.arrayBuffers - base.arrayBuffers)} MiB | ${mib(p.retained.heapUsed + p.retained.arrayBuffers - base.heapUsed - base.arrayBuffers)} MiB | ` +
        `${mib(p.peak.heapPlusArrayBuffers)} MiB | ${mib((p.peakRssKernel ?? p.peak.rss) - base.rss)} MiB | ${fixed(p.maxSampleGapMs, 0)} ms |`,
    );
    log(
      `    ${p.blocks} blocks, ${p.textChunks} text chunks, ${p.images} images (${mib(p.pngBytes)} MiB of PNG), ` +
        `baseline heap ${mib(base.heapUsed)} MiB + AB ${mib(base.arrayBuffers)} MiB, ${p.samples} samples`,
    );
  }

  let e2e: Awaited<ReturnType<typeof endToEnd>> | null = null;
  if (!flags['skip-e2e']) {
    const withImages = new Set(parse.stats.filter((s) => s.images > 0).map((s) => s.name));
    const large = flags['skip-large']
      ? null
      : { name: LARGE_PDF, path: join(dir, LARGE_PDF), bytes: new Uint8Array(readFileSync(join(dir, LARGE_PDF))) };
    e2e = await endToEnd(corpus, withImages, textFile, large);
    const rssCell = (seg: Segment) =>
      seg.rss ? `${mib(seg.rss.start)} → ${mib(seg.rss.peak)} MiB (+${mib(seg.rss.peak - seg.rss.start)})` : 'n/a';
    log(`\ningest workerd: pid ${e2e.workerd?.pid} of ${JSON.stringify(e2e.workerd?.all)}, idle RSS ${mib(e2e.idleRss)} MiB`);
    log(`without OCR = corpus minus the files that yield images (${[...withImages].join(', ')})`);
    log('\n| run | files | MB | chunks | status | wall s | MB/s | chunks/s | ingest workerd RSS: start → peak (growth) |');
    log('|---|---:|---:|---:|---|---:|---:|---:|---:|');
    for (const seg of [...e2e.single, e2e.noOcr, e2e.full, ...(e2e.large ? [e2e.large] : [])]) {
      const s = seg.summary;
      const status = s.notSucceeded.length === 0 ? 'all succeeded' : `${s.succeeded}/${s.files} succeeded`;
      log(
        `| ${seg.label} | ${s.files} | ${fixed(s.bytes / MB, 2)} | ${s.chunks} | ${status} | ${fixed(s.wallS, 2)} | ${fixed(s.mbPerS, 3)} | ` +
          `${fixed(s.chunksPerS, 1)} | ${rssCell(seg)} |`,
      );
      for (const problem of s.notSucceeded) log(`    not succeeded: ${problem}`);
    }
    log('\nper file in the full-corpus run (upload start → terminal status seen, 100 ms polling):');
    for (const f of [...e2e.full.run.files].sort((a, b) => b.ms - a.ms)) {
      log(`  ${f.name}: ${fixed(f.ms / 1000, 2)} s, ${f.job.chunks_total} chunks, ${f.job.status}`);
    }
    const walls = e2e.single.map((s) => s.summary.wallS);
    const extractGrowth = e2e.single.map((seg) =>
      seg.rss?.extractPeak != null ? `+${mib(seg.rss.extractPeak - seg.rss.start)}` : 'n/a',
    );
    log(`\n${TEXT_PDF} end to end: ${walls.map((w) => fixed(w, 2)).join(', ')} s → median ${fixed(median(walls), 2)} s`);
    log(`  ingest workerd RSS growth until the extract step saved its rows: ${extractGrowth.join(', ')} MiB`);
    const largeRss = e2e.large?.rss;
    if (largeRss) {
      log(
        `${LARGE_PDF} end to end: ingest workerd RSS ${mib(largeRss.start)} → ${mib(largeRss.peak)} MiB` +
          (largeRss.extractPeak === null
            ? ', the extract step never saved its rows'
            : `; peak until the extract step saved its rows ${mib(largeRss.extractPeak)} MiB`),
      );
    }
  }

  const totalS = (performance.now() - benchStart) / 1000;
  log(
    `\nbench wall time ${fixed(totalS, 0)} s; load average at the end ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
  );
  if (flags.out) {
    const results = {
      machine,
      textPdf: { spec: textSpec, bytes: textPdf.bytes.byteLength },
      largePdf: largeInfo,
      parse,
      parseSummary,
      probes,
      e2e,
      totalS,
    };
    writeFileSync(flags.out, JSON.stringify(results, null, 2));
  }
  if (!flags['keep-pdfs']) await rm(dir, { recursive: true, force: true });
}

await main();
