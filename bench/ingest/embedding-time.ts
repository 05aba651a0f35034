/**
 * The embedding time itself, per document: what the ingest worker sends to /v1/embeddings for the load run's
 * documents (the first N PubMedQA abstracts, parsed and chunked as the pipeline does at the default
 * chunk_size, the heading path before the text), embedded by the devstack's engine alone on an idle machine,
 * in the batches the embed step sends. The model is the devstack's default (bge-small-en-v1.5) unless --model names another. Compare with docs/s of `bench/load/load.ts --roots sparse=.@off,hybrid=.@DIR`.
 *
 *   npx tsx bench/ingest/embedding-time.ts [--documents 100] [--model ../shared/weights/bge-small-en-v1.5] [--rounds 3]
 */
import { join } from 'node:path';
import { indexedText } from '#retrieval/vector-metadata.ts';
import { loadEmbeddingEngine } from '../../devstack/models/embedding-engine.ts';
import { resolveEmbeddingSource } from '../../devstack/models/embedding-source.ts';
import { chunkDocument } from '../../workers/ingest/src/chunking/chunk-blocks.ts';
import { parseDocument } from '../../workers/ingest/src/parsers/index.ts';
import { fail, readFlags, text, whole } from '../harness/flags.ts';
import { machine } from '../harness/machine.ts';
import { pubmedCorpus } from '../harness/query-stack.ts';
import { median } from '../harness/stats.ts';

const flags = readFlags({
  documents: whole('100', 1, 500),
  model: text(new URL('../../../shared/weights/bge-small-en-v1.5', import.meta.url).pathname),
  rounds: whole('3', 1),
});
// The collection default (src/api/services/collections.ts) and the ingest worker's batch.
const CHUNK_SIZE = 1000;
const BATCH = 64;

const resolved = await resolveEmbeddingSource({
  embeddingModel: flags.model,
  sharedModelsDir: '/nonexistent',
  cacheDir: join(process.cwd(), '.data', 'models'),
  allowDownload: false,
});
if ('unavailable' in resolved) fail(resolved.unavailable);
const engine = await loadEmbeddingEngine(
  (resolved as { source: Parameters<typeof loadEmbeddingEngine>[0] }).source,
  '.data/models',
);

const texts: string[][] = [];
for (const file of pubmedCorpus(flags.documents).files) {
  const parsed = await parseDocument('txt', file.bytes);
  const { chunks } = chunkDocument(parsed.blocks, { chunkSize: CHUNK_SIZE, maxChunks: 10_000 });
  texts.push(
    chunks.map((chunk) =>
      indexedText({
        chunk_index: chunk.index,
        chunk_type: 'text',
        text: chunk.text,
        metadata: { ...chunk.metadata },
        image_path: null,
      }),
    ),
  );
}
const chunkCount = texts.reduce((n, t) => n + t.length, 0);
const { cores, cpu, node } = machine();
console.log(`${cores} cores, ${cpu}, Node ${node}; ${flags.documents} documents, ${chunkCount} chunks; ${engine.model}`);

const perDocument: number[] = [];
for (let round = 1; round <= flags.rounds; round++) {
  const started = performance.now();
  for (const document of texts) {
    for (let i = 0; i < document.length; i += BATCH) await engine.embed(document.slice(i, i + BATCH));
  }
  const ms = performance.now() - started;
  perDocument.push(ms / flags.documents);
  console.log(`round ${round}: ${(ms / 1000).toFixed(2)} s, ${(ms / flags.documents).toFixed(1)} ms a document`);
}
console.log(
  `median: ${median(perDocument).toFixed(1)} ms of embedding a document (${(1000 / median(perDocument)).toFixed(1)} docs/s)`,
);
await engine.close();
