/**
 * The long-document set's sparse half without the stack, before and after the document context, in one run:
 * each report parsed and chunked by the ingest worker's own read step (readRange, at the default chunk_size),
 * each chunk encoded by the shipped BM25 encoder from its indexed text with and without its document's context
 * (indexedText), into the devstack's own sparse index (IDF at query time, as Upstash); every question of
 * bench/long-documents/questions.json asked of both indexes, top 5, scored as bench/long-documents.ts scores.
 * What it leaves out: the dense half and fusion, and the HTTP path. bench/long-documents.ts is the whole stack.
 *
 *   npx tsx bench/long-documents-sparse.ts [--data .data/long-documents]
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_CONFIG } from '#retrieval/config.ts';
import { documentContext } from '#retrieval/document-context.ts';
import { encodeDocument, encodeQuery } from '#retrieval/sparse.ts';
import { indexedText } from '#retrieval/vector-metadata.ts';
import { SparseIndex } from '../devstack/vector/sparse.ts';
import { readRange } from '../workers/ingest/src/pipeline/read-range.ts';
import { log } from './format.ts';
import { loadFigures, machine } from './machine.ts';

const { values: flags } = parseArgs({ options: { data: { type: 'string', default: '.data/long-documents' } } });
const here = join(import.meta.dirname, 'long-documents');
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
  for (const [label, index] of Object.entries(variants)) {
    let doc = 0;
    let figure = 0;
    for (const q of questions) {
      const top = index
        .search(encodeQuery(q.question), 'IDF')
        .slice(0, 5)
        .map((m) => chunks[m.key] as Chunk);
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

await main();
