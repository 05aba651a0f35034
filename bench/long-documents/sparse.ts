/**
 * The long-document set's sparse half without the stack, before and after the document context, in one run:
 * each report parsed and chunked by the ingest worker's own read step (readRange, at the default chunk_size),
 * each chunk encoded by the shipped BM25 encoder from its indexed text with and without its document's context
 * (indexedText), into the devstack's own sparse index (IDF at query time, as Upstash); every question of
 * bench/long-documents/questions.json asked of both indexes, top 5, scored as bench/long-documents/long-documents.ts scores.
 * With --model (a folder of shared/weights, or a path), the dense half too: the devstack's embedding engine on
 * the same indexed texts, the question with the model's query instruction, exact cosine, fused with the sparse
 * top 5 by the devstack's DBSF (the API's default RETRIEVAL_FUSION), as a similarity search with top_k 5 asks.
 * What it leaves out: the HTTP path. bench/long-documents/long-documents.ts is the whole stack.
 *
 *   npx tsx bench/long-documents/sparse.ts [--data .data/long-documents] [--model bge-small-en-v1.5]
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_CONFIG } from '#retrieval/config.ts';
import { documentContext } from '#retrieval/document-context.ts';
import { queryEmbeddingText, queryPrefixFor } from '#retrieval/query-instruction.ts';
import { encodeDocument, encodeQuery } from '#retrieval/sparse.ts';
import { indexedText } from '#retrieval/vector-metadata.ts';
import { loadEmbeddingEngine } from '../../devstack/models/embedding-engine.ts';
import { resolveEmbeddingSource } from '../../devstack/models/embedding-source.ts';
import { fuse, type Ranked } from '../../devstack/vector/fusion.ts';
import { SparseIndex } from '../../devstack/vector/sparse.ts';
import { readRange } from '../../workers/ingest/src/pipeline/read-range.ts';
import { log } from '../harness/format.ts';
import { loadFigures, machine } from '../harness/machine.ts';

const { values: flags } = parseArgs({
  options: { data: { type: 'string', default: '.data/long-documents' }, model: { type: 'string' } },
});
const here = import.meta.dirname;
const manifest = JSON.parse(readFileSync(join(here, 'manifest.json'), 'utf8')) as { files: { name: string; sha256: string }[] };
const { questions } = JSON.parse(readFileSync(join(here, 'questions.json'), 'utf8')) as {
  questions: { question: string; document: string; figure: string }[];
};

const holdsFigure = (text: string, figure: string) =>
  new RegExp(`(?<![\\d,.])${figure.replace(/[.$()]/gu, (c) => `\\${c}`)}(?![\\d]|[,.]\\d)`, 'u').test(text);

interface Chunk {
  document: string;
  text: string;
  metadata: Record<string, unknown>;
}

async function main() {
  const { cores, cpu, memGiB, node } = machine();
  const loadStart = loadFigures();
  log(`machine: ${cores} cores, ${cpu}, ${memGiB.toFixed(1)} GiB, Node ${node}, load ${loadStart.join(' ')}`);
  const chunks: Chunk[] = [];
  const contexts = new Map<string, ReturnType<typeof documentContext>>();
  for (const file of manifest.files) {
    const bytes = new Uint8Array(readFileSync(join(flags.data as string, file.name)));
    const sha = createHash('sha256').update(bytes).digest('hex');
    if (sha !== file.sha256) throw new Error(`${file.name}: SHA-256 ${sha}, the manifest says ${file.sha256}`);
    for (let from = 1; ; ) {
      const range = await readRange({ type: 'pdf', bytes: bytes.slice(), chunkSize: DEFAULT_CONFIG.chunk_size, fromPage: from });
      if (range.context) contexts.set(file.name, documentContext({ name: file.name, ...range.context }));
      for (const c of range.chunks)
        chunks.push({ document: file.name, text: c.text, metadata: c.metadata as Record<string, unknown> });
      if (range.extracted || range.lastPage === undefined) break;
      from = range.lastPage + 1;
    }
  }
  log(`parsed: ${manifest.files.length} reports, ${chunks.length} chunks (chunk_size ${DEFAULT_CONFIG.chunk_size})`);
  for (const [name, context] of contexts) log(`  ${name}: ${JSON.stringify(context)}`);

  const variants = { before: new SparseIndex(), after: new SparseIndex() };
  chunks.forEach((chunk, key) => {
    const row = { chunk_index: key, chunk_type: 'text' as const, text: chunk.text, metadata: chunk.metadata, image_path: null };
    variants.before.add(key, encodeDocument(indexedText(row)));
    variants.after.add(key, encodeDocument(indexedText(row, contexts.get(chunk.document))));
  });
  const dense = flags.model ? await denseHalf(chunks, contexts) : undefined;
  const passes = Object.entries(variants).flatMap(([label, index]) => [
    { label: `${label}, sparse`, index, vectors: undefined },
    ...(dense ? [{ label: `${label}, hybrid (${dense.model})`, index, vectors: dense[label as 'before' | 'after'] }] : []),
  ]);
  for (const { label, index, vectors } of passes) {
    let doc = 0;
    let figure = 0;
    for (const [i, q] of questions.entries()) {
      const sparse = index.search(encodeQuery(q.question), 'IDF').slice(0, 5);
      const ranked = vectors && dense ? fuse(nearest(vectors, dense.questions[i] as Float32Array), sparse, 'DBSF', 5) : sparse;
      const top = ranked.map((m) => chunks[m.key] as Chunk);
      const own = top.filter((c) => c.document === q.document);
      if (own.length > 0) doc++;
      if (own.some((c) => holdsFigure(c.text, q.figure))) figure++;
    }
    log(
      `${label}: doc@5 ${(doc / questions.length).toFixed(3)} (${doc}/${questions.length}), ` +
        `figure@5 ${(figure / questions.length).toFixed(3)} (${figure}/${questions.length})`,
    );
  }
  log(`load at the end: ${loadFigures().join(' ')}`);
}

/** The five chunks nearest the question: unit vectors, so the dot product is the cosine. */
function nearest(vectors: Float32Array[], question: Float32Array): Ranked[] {
  const scored = vectors.map((v, key) => {
    let dot = 0;
    for (let d = 0; d < v.length; d++) dot += (v[d] as number) * (question[d] as number);
    return { key, score: dot };
  });
  return scored.sort((a, b) => b.score - a.score).slice(0, 5);
}

async function denseHalf(chunks: Chunk[], contexts: Map<string, ReturnType<typeof documentContext>>) {
  const cacheDir = join(import.meta.dirname, '../../.data/models');
  const resolved = await resolveEmbeddingSource({
    embeddingModel: flags.model as string,
    sharedModelsDir: join(import.meta.dirname, '../../../shared/weights'),
    cacheDir,
    allowDownload: false,
  });
  if (!('source' in resolved)) throw new Error(`--model: ${resolved.unavailable}`);
  const engine = await loadEmbeddingEngine(resolved.source, cacheDir);
  const started = performance.now();
  const embed = async (texts: string[]) => (await engine.embed(texts)).vectors;
  const rows = chunks.map((c, i) => ({
    chunk_index: i,
    chunk_type: 'text' as const,
    text: c.text,
    metadata: c.metadata,
    image_path: null,
  }));
  const before = await embed(rows.map((row) => indexedText(row)));
  const after = await embed(rows.map((row, i) => indexedText(row, contexts.get((chunks[i] as Chunk).document))));
  const prefix = queryPrefixFor(engine.model, undefined);
  const asked = await embed(questions.map((q) => queryEmbeddingText(prefix, q.question)));
  log(
    `embedded ${before.length * 2 + asked.length} texts with ${engine.model} in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  await engine.close();
  return { model: engine.model, before, after, questions: asked };
}

await main();
