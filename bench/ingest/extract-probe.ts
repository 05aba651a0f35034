/**
 * The memory of one ingest worker extract invocation's work, measured in a fresh Node process:
 * read the file's bytes, parseDocument, chunkBlocks (chunk size 1000), keeping everything alive
 * until the end as the extract step does until it saves the rows. A PDF is read as the worker
 * reads it: one range of PDF_PAGES_PER_STEP pages per invocation (the first range unless
 * `--from-page N`), with the file's bytes handed to pdf.js rather than copied. Node's V8 stands in for the
 * workerd isolate (whose limit is 128 MB of JS heap plus ArrayBuffers).
 *
 *   node --expose-gc --import tsx bench/ingest/extract-probe.ts <file> [type]
 *
 * Prints one JSON line (ProbeResult). bench/ingest/ingest.ts runs it once per file.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { getResolvedPDFJS } from 'unpdf';
import { typeFromExtension } from '#core/documents/detect-type.ts';
import { chunkBlocks } from '../../workers/ingest/src/chunking/chunk-blocks.ts';
import { parseDocument } from '../../workers/ingest/src/parsers/index.ts';
import { DEFAULT_PARSE_LIMITS } from '../../workers/ingest/src/parsers/types.ts';
import { PDF_PAGES_PER_STEP } from '../../workers/ingest/src/pipeline/read-range.ts';

export interface MemorySample {
  heapUsed: number;
  heapTotal: number;
  arrayBuffers: number;
  rss: number;
}

export interface ProbeResult {
  file: string;
  bytes: number;
  ms: { read: number; parse: number; chunk: number };
  blocks: number;
  textChunks: number;
  images: number;
  pngBytes: number;
  textChars: number;
  warnings: number;
  /** After loading the modules and pdf.js, and a full GC. */
  baseline: MemorySample;
  /** Highest value of each field seen, and of heapUsed + arrayBuffers together. */
  peak: MemorySample & { heapPlusArrayBuffers: number; heapTotalPlusArrayBuffers: number };
  /** What is still reachable when the rows are about to be saved (after a full GC). */
  retained: MemorySample;
  /** Kernel-tracked peak RSS since the baseline (VmHWM after resetting it), in bytes; null if it could not be reset. */
  peakRssKernel: number | null;
  samples: number;
  /** Longest stretch without a sample: synchronous work the sampler could not interrupt. */
  maxSampleGapMs: number;
}

const SAMPLE_EVERY_MS = 5;

function sample(): MemorySample {
  const { heapUsed, heapTotal, arrayBuffers, rss } = process.memoryUsage();
  return { heapUsed, heapTotal, arrayBuffers, rss };
}

function statusField(name: string): number | null {
  const match = readFileSync('/proc/self/status', 'utf8').match(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm'));
  return match ? Number(match[1]) * 1024 : null;
}

/** Resets the kernel's peak-RSS counter (Linux ≥ 4.0), so VmHWM then tells the peak of what follows. */
function resetPeakRss(): boolean {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false;
  }
}

async function main() {
  const args = process.argv.slice(2);
  const fromFlag = args.indexOf('--from-page');
  const fromPage = fromFlag >= 0 ? Number(args.splice(fromFlag, 2)[1]) : 1;
  const [file, typeArg] = args;
  if (!file) throw new Error('usage: extract-probe.ts <file> [type]');
  const type = (typeArg ?? typeFromExtension(file)) as Parameters<typeof parseDocument>[0] | null;
  if (!type) throw new Error(`no document type for ${file}`);
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');

  // A warm isolate has already loaded pdf.js; its code is not the document's cost.
  await getResolvedPDFJS();
  gc();
  gc();
  const baseline = sample();
  const hwmReset = resetPeakRss();

  const peak = { ...baseline, heapPlusArrayBuffers: 0, heapTotalPlusArrayBuffers: 0 };
  let samples = 0;
  let last = performance.now();
  let maxGap = 0;
  const record = () => {
    const now = performance.now();
    maxGap = Math.max(maxGap, now - last);
    last = now;
    const s = sample();
    samples++;
    peak.heapUsed = Math.max(peak.heapUsed, s.heapUsed);
    peak.heapTotal = Math.max(peak.heapTotal, s.heapTotal);
    peak.arrayBuffers = Math.max(peak.arrayBuffers, s.arrayBuffers);
    peak.rss = Math.max(peak.rss, s.rss);
    peak.heapPlusArrayBuffers = Math.max(peak.heapPlusArrayBuffers, s.heapUsed + s.arrayBuffers);
    peak.heapTotalPlusArrayBuffers = Math.max(peak.heapTotalPlusArrayBuffers, s.heapTotal + s.arrayBuffers);
  };
  const timer = setInterval(record, SAMPLE_EVERY_MS);
  record();

  const t0 = performance.now();
  // The worker gets the stored original as one ArrayBuffer (Response.arrayBuffer()).
  const buffer = readFileSync(file);
  const bytes = new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  record();
  const t1 = performance.now();
  const pages = type === 'pdf' ? { first: fromPage, last: fromPage + PDF_PAGES_PER_STEP - 1 } : undefined;
  // The step stores each image as it is found and keeps only its path.
  let storedImages = 0;
  let storedPngBytes = 0;
  const onImage = async (image: { bytes: Uint8Array }) => {
    storedImages++;
    storedPngBytes += image.bytes.byteLength;
  };
  const parsed = await parseDocument(type, bytes, DEFAULT_PARSE_LIMITS, { pages, transferBytes: true, onImage });
  record();
  const t2 = performance.now();
  const chunks = chunkBlocks(parsed.blocks, { chunkSize: 1000 });
  record();
  const t3 = performance.now();
  clearInterval(timer);

  gc();
  const retained = sample();
  const hwm = hwmReset ? statusField('VmHWM') : null;
  const result: ProbeResult = {
    file,
    bytes: readFileSync(file).byteLength,
    ms: { read: t1 - t0, parse: t2 - t1, chunk: t3 - t2 },
    blocks: parsed.blocks.length,
    textChunks: chunks.length,
    images: parsed.images.length + storedImages,
    pngBytes: parsed.images.reduce((sum, image) => sum + image.bytes.byteLength, 0) + storedPngBytes,
    textChars: chunks.reduce((sum, chunk) => sum + chunk.text.length, 0),
    warnings: parsed.warnings.length,
    baseline,
    peak,
    retained,
    peakRssKernel: hwm,
    samples,
    maxSampleGapMs: maxGap,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

await main();
