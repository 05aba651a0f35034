/**
 * Ingestion benchmark: parse+chunk throughput in-process, end-to-end ingestion through the devstack and
 * both workers, and the memory one extract invocation needs. See docs/benchmarks.md, "Ingestion".
 *
 *   npx tsx bench/ingest/ingest.ts [--repeat 5] [--runs 3] [--skip-large] [--text-50mb] [--skip-e2e] [--out results.json]
 *
 * --repeat   measured parse+chunk passes over the corpus (after one warm-up pass); medians are reported
 * --runs     end-to-end ingestions of the ~100-page text PDF; the median is reported
 * --skip-large  no 50 MB PDF (saves about a minute and a half)
 * --text-50mb   also probe the memory of a text-only 50 MB PDF (2,480 pages; adds about two minutes)
 * --skip-e2e    no devstack, no workers: parse+chunk and memory only
 * --keep-pdfs DIR  write the generated PDFs there (and keep them)
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFlags, text, toggle, whole } from '../harness/flags.ts';
import { fixed, log } from '../harness/format.ts';
import { load, loadFigures, machine } from '../harness/machine.ts';
import { type CorpusFile, fixtureCorpus, generatePdfs, LARGE_PDF, LARGE_TEXT_PDF, TEXT_PDF } from './corpus.ts';
import { extractMemorySection } from './extract-memory.ts';
import { parseSection } from './parse-throughput.ts';
import { endToEndSection } from './segments.ts';

const flags = readFlags({
  repeat: whole('5', 1),
  runs: whole('3', 1),
  'skip-large': toggle(),
  'text-50mb': toggle(),
  'skip-e2e': toggle(),
  out: text(),
  'keep-pdfs': text(),
});

async function main() {
  const { cores: nproc, cpu, memGiB, node } = machine();
  const facts = { nproc, cpu, ramGiB: Number(memGiB.toFixed(1)), node, loadAtStart: loadFigures() };
  log(`# Ingestion benchmark\nmachine: ${JSON.stringify(facts)}`);
  const benchStart = performance.now();
  const dir = flags['keep-pdfs'] ?? (await mkdtemp(join(tmpdir(), 'rag-bench-pdfs-')));
  mkdirSync(dir, { recursive: true });

  const { textSpec, textPdf, largeInfo } = await generatePdfs(dir, {
    skipLarge: flags['skip-large'],
    text50mb: flags['text-50mb'],
  });
  const fixtures = fixtureCorpus();
  const textFile: CorpusFile = { name: TEXT_PDF, path: join(dir, TEXT_PDF), bytes: textPdf.bytes };
  const corpus = [...fixtures, textFile];
  const { parse, parseSummary } = await parseSection(corpus, flags.repeat);

  const largestFixture = [...fixtures].sort((a, b) => b.bytes.byteLength - a.bytes.byteLength)[0] as CorpusFile;
  const probes = await extractMemorySection([
    largestFixture.path,
    join(dir, TEXT_PDF),
    ...(flags['skip-large'] ? [] : [join(dir, LARGE_PDF)]),
    ...(flags['text-50mb'] ? [join(dir, LARGE_TEXT_PDF)] : []),
  ]);

  let e2e: Awaited<ReturnType<typeof endToEndSection>> | null = null;
  if (!flags['skip-e2e']) {
    const withImages = new Set(parse.stats.filter((s) => s.images > 0).map((s) => s.name));
    const large = flags['skip-large']
      ? null
      : { name: LARGE_PDF, path: join(dir, LARGE_PDF), bytes: new Uint8Array(readFileSync(join(dir, LARGE_PDF))) };
    e2e = await endToEndSection({ corpus, withImages, textPdf: textFile, large, runs: flags.runs });
  }

  const totalS = (performance.now() - benchStart) / 1000;
  log(`\nbench wall time ${fixed(totalS, 0)} s; load average at the end ${load().join(' ')}`);
  if (flags.out) {
    const results = {
      machine: facts,
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
