/** Parse + chunk throughput in-process for bench/ingest/ingest.ts: parseDocument and chunkBlocks over the corpus. */
import { typeFromExtension } from '#core/documents/detect-type.ts';
import { chunkBlocks } from '../../workers/ingest/src/chunking/chunk-blocks.ts';
import { parseDocument } from '../../workers/ingest/src/parsers/index.ts';
import { fixed, log, MB } from '../harness/format.ts';
import { median } from '../harness/stats.ts';
import type { CorpusFile } from './corpus.ts';

const CHUNK_SIZE = 1000;

interface ParseStats {
  name: string;
  bytes: number;
  blocks: number;
  textChunks: number;
  images: number;
  ms: number[];
}

/** One warm-up pass and `repeat` measured ones. */
async function parseThroughput(corpus: CorpusFile[], repeat: number) {
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

/** Measures and prints the table: a row per file (median of the passes) and one for the whole corpus. */
export async function parseSection(corpus: CorpusFile[], repeat: number) {
  log(`\n## Parse + chunk in-process (Node ${process.version}, chunk size ${CHUNK_SIZE}), ${repeat} passes after a warm-up`);
  const parse = await parseThroughput(corpus, repeat);
  const corpusBytes = corpus.reduce((sum, f) => sum + f.bytes.byteLength, 0);
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
  return { parse, parseSummary };
}
