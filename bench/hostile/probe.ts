/**
 * One hostile file through the extract steps, in a fresh Node process, for bench/hostile/hostile-files.ts:
 * its CPU time and peak memory, and how its job would end. `--root` picks the checkout whose code
 * runs: one with workers/ingest/src/pipeline/read-range.ts runs that, the parse step the worker
 * runs now; an older one runs what its extract step did, parseDocument and then chunkBlocks, 100
 * PDF pages a step.
 *
 *   node --expose-gc --import tsx bench/hostile/probe.ts --root <checkout> --file <file> --type <type>
 *
 * Prints a `ready` line (CPU and memory once the modules and pdf.js are loaded), then a `result`
 * line. The parent kills a probe that runs too long, and reads the kernel's figures of it itself;
 * the probe also reads them around each step, for the peak of the largest step (one worker
 * invocation) and for a parent that could not see the whole run (test/unit/hostile-files.test.ts).
 * Images are handed over as the worker hands them to storage, and dropped.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { getResolvedPDFJS } from 'unpdf';
import type { DocType } from '#core/documents/detect-type.ts';
import { runSteps, type StepOutcome } from '../../devstack/harness/hostile-files.ts';
import { fail, readFlags, text } from '../harness/flags.ts';

const CHUNK_SIZE = 1000;

export interface ProbeReady {
  ready: true;
  cpuMs: number;
  rss: number;
}

export interface ProbeResult {
  result: true;
  /** CPU (user + system) of all the steps. */
  cpuMs: number;
  /** CPU of the longest step: one worker invocation's share. */
  maxStepCpuMs: number;
  /** The kernel's peak resident set over all the steps (VmHWM), in bytes. */
  peakRss: number;
  /** The largest growth of the resident set within one step, over what it was when the step began. */
  maxStepPeakBytes: number;
  status: string;
  message: string;
  chunks: number;
  steps: number;
}

const load = (root: string, path: string) => import(pathToFileURL(join(root, path)).href);

type Step = (fromPage: number, chunksBefore: number, decodedBefore: number) => Promise<StepOutcome>;

/** The parse step of the checkout at `root`. */
async function stepOf(root: string, type: DocType, bytes: Uint8Array): Promise<Step> {
  if (existsSync(join(root, 'workers/ingest/src/pipeline/read-range.ts'))) {
    const { readRange } = await load(root, 'workers/ingest/src/pipeline/read-range.ts');
    return async (fromPage, chunksBefore, decodedBefore) => {
      let handedOver = 0;
      const range = await readRange({
        type,
        bytes,
        chunkSize: CHUNK_SIZE,
        fromPage,
        before: { chunks: chunksBefore, images: 0, decodedBytes: decodedBefore },
        // The worker stores each image as it is found and keeps only its path.
        source: {
          onImage: async () => {
            handedOver++;
          },
        },
      });
      return {
        chunks: range.chunks.length + range.images.length + handedOver,
        warnings: range.warnings,
        decodedBytes: range.decodedBytes,
        ...(range.extracted ? {} : { nextPage: range.lastPage + 1 }),
      };
    };
  }
  const { parseDocument } = await load(root, 'workers/ingest/src/parsers/index.ts');
  const { chunkBlocks } = await load(root, 'workers/ingest/src/chunking/chunk-blocks.ts');
  return async (fromPage) => {
    const pages = type === 'pdf' ? { first: fromPage, last: fromPage + 99 } : undefined;
    const parsed = await parseDocument(type, bytes, undefined, { pages });
    const chunks = chunkBlocks(parsed.blocks, { chunkSize: CHUNK_SIZE });
    const lastPage = pages ? Math.min(pages.last, parsed.pageCount ?? pages.last) : undefined;
    const done = lastPage === undefined || lastPage >= (parsed.pageCount ?? 0);
    return {
      chunks: chunks.length + parsed.images.length,
      warnings: parsed.warnings,
      ...(done ? {} : { nextPage: lastPage + 1 }),
    };
  };
}

/** A field of /proc/self/status in bytes (VmHWM, VmRSS). */
function status(field: string): number {
  const match = readFileSync('/proc/self/status', 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
  return match ? Number(match[1]) * 1024 : 0;
}

/** Resets the kernel's peak-RSS counter to the current RSS. */
const resetPeak = () => writeFileSync('/proc/self/clear_refs', '5');

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

async function main() {
  const { root, file, type } = readFlags({ root: text(process.cwd()), file: text(), type: text() });
  if (!file || !type) fail('usage: hostile-probe.ts --root <checkout> --file <file> --type <type>');
  const bytes = new Uint8Array(readFileSync(file));
  const step = await stepOf(resolve(root), type as DocType, bytes);
  // A warm isolate has pdf.js loaded already; its code is not the document's cost.
  await getResolvedPDFJS();
  // From here the kernel's peak-RSS counter (VmHWM) tells the peak of the document's work.
  resetPeak();
  const ready: ProbeReady = { ready: true, cpuMs: cpuMs(), rss: process.memoryUsage().rss };
  process.stdout.write(`${JSON.stringify(ready)}\n`);

  let maxStep = 0;
  let peakRss = 0;
  let maxStepPeak = 0;
  const start = cpuMs();
  const gc = (globalThis as { gc?: () => void }).gc;
  let stepsRun = 0;
  const outcome = await runSteps(async (fromPage, chunksBefore, decodedBefore) => {
    // The peak so far is kept before the counter is reset for this step.
    peakRss = Math.max(peakRss, status('VmHWM'));
    // Each step is a worker invocation: it starts without the last one's garbage, which a 128 MB
    // isolate has collected by then (a 4 GB heap would let twenty steps' worth pile up).
    if (stepsRun++ > 0) gc?.();
    resetPeak();
    const rssBefore = status('VmRSS');
    const before = cpuMs();
    try {
      return await step(fromPage, chunksBefore, decodedBefore);
    } finally {
      maxStep = Math.max(maxStep, cpuMs() - before);
      const peak = status('VmHWM');
      peakRss = Math.max(peakRss, peak);
      maxStepPeak = Math.max(maxStepPeak, peak - rssBefore);
    }
  });
  const result: ProbeResult = {
    result: true,
    cpuMs: cpuMs() - start,
    maxStepCpuMs: maxStep,
    peakRss,
    maxStepPeakBytes: maxStepPeak,
    ...outcome,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

await main();
