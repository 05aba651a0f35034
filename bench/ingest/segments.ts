/**
 * End-to-end ingestion for bench/ingest/ingest.ts: segments of uploads through the devstack and both workers
 * under `wrangler dev`, each timed and with the ingest workerd's resident memory watched.
 */

import { fixed, log, MB, mib } from '../harness/format.ts';
import { statusBytes, watchRss, workerRuntimePid } from '../harness/processes.ts';
import { createCollection, type IngestRun, ingestAll, type Job, signUp, startBenchStack } from '../harness/stack.ts';
import { median } from '../harness/stats.ts';
import { type CorpusFile, LARGE_PDF, TEXT_PDF } from './corpus.ts';

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

export interface EndToEndPlan {
  corpus: CorpusFile[];
  /** The files that yield images, left out of the segment without OCR. */
  withImages: Set<string>;
  textPdf: CorpusFile;
  large: CorpusFile | null;
  /** How many times the text PDF is ingested alone. */
  runs: number;
}

async function endToEnd({ corpus, withImages, textPdf, large, runs }: EndToEndPlan) {
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

/**
 * Runs the segments (the text PDF `runs` times, the corpus without the files that yield images, the
 * full corpus, the large PDF if given) and prints their table.
 */
export async function endToEndSection(plan: EndToEndPlan) {
  const e2e = await endToEnd(plan);
  const rssCell = (seg: Segment) =>
    seg.rss ? `${mib(seg.rss.start)} → ${mib(seg.rss.peak)} MiB (+${mib(seg.rss.peak - seg.rss.start)})` : 'n/a';
  log(`\ningest workerd: pid ${e2e.workerd?.pid} of ${JSON.stringify(e2e.workerd?.all)}, idle RSS ${mib(e2e.idleRss)} MiB`);
  log(`without OCR = corpus minus the files that yield images (${[...plan.withImages].join(', ')})`);
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
  return e2e;
}
