/**
 * BEIR SciFact as bench/retrieval/retrieval.ts uses it: the corpus, the training queries and their judgements,
 * and the file each abstract is uploaded as.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { log } from '../harness/format.ts';
import { parseQrels, type Qrels } from './metrics.ts';

export interface Doc {
  id: string;
  title: string;
  text: string;
}

export type Scifact = ReturnType<typeof loadScifact>;

function readJsonl<T>(path: string): T[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, i) => {
      try {
        return JSON.parse(line) as T;
      } catch {
        throw new Error(`${path} line ${i + 1} is not JSON`);
      }
    });
}

/**
 * The judged training queries (the first `limitQueries`) and the corpus; with `limitDocs`, the documents
 * judged for those queries, then others in corpus order up to `limitDocs`.
 */
export function loadScifact(dir: string, limitDocs: number | undefined, limitQueries: number | undefined) {
  const corpus = readJsonl<{ _id: string; title?: string; text?: string }>(join(dir, 'corpus.jsonl')).map(
    (d): Doc => ({ id: String(d._id), title: d.title ?? '', text: d.text ?? '' }),
  );
  const queryText = new Map(
    readJsonl<{ _id: string; text: string }>(join(dir, 'queries.jsonl')).map((q) => [String(q._id), q.text]),
  );
  const allQrels = parseQrels(readFileSync(join(dir, 'qrels', 'train.tsv'), 'utf8'));

  const queryIds = [...allQrels.keys()].slice(0, limitQueries);
  const missing = queryIds.filter((id) => !queryText.get(id)?.trim());
  if (missing.length > 0)
    throw new Error(`queries.jsonl has no text for ${missing.length} judged queries (${missing.slice(0, 5)})`);
  const qrels: Qrels = new Map(queryIds.map((id) => [id, allQrels.get(id) as Map<string, number>]));

  let docs = corpus;
  if (limitDocs !== undefined) {
    const relevant = new Set([...qrels.values()].flatMap((judged) => [...judged.keys()]));
    const judgedDocs = corpus.filter((d) => relevant.has(d.id));
    const others = corpus.filter((d) => !relevant.has(d.id)).slice(0, Math.max(0, limitDocs - judgedDocs.length));
    docs = [...judgedDocs, ...others];
    if (judgedDocs.length > limitDocs)
      log(`note: all ${judgedDocs.length} judged documents kept, above --limit-docs ${limitDocs}`);
  }
  const ids = new Set(corpus.map((d) => d.id));
  const unknown = [...qrels.values()].flatMap((judged) => [...judged.keys()]).filter((id) => !ids.has(id));
  if (unknown.length > 0) throw new Error(`qrels name ${unknown.length} documents not in the corpus (${unknown.slice(0, 5)})`);
  return { docs, corpusSize: corpus.length, queries: queryIds.map((id) => ({ id, text: queryText.get(id) as string })), qrels };
}

// One abstract per file, named by its corpus id. As text: the title as its first line, then the abstract. As
// Markdown: the title as a `#` heading, which the chunker carries as the heading path of every chunk of the
// abstract, so a chunk after the first still says what it is about (indexed dense and sparse).
export type FileFormat = 'txt' | 'md';
export const fileName = (doc: Doc, format: FileFormat = 'txt') => `${doc.id}.${format}`;
export const docIdOf = (source: string) => source.replace(/\.(txt|md)$/u, '');
export function fileText(doc: Doc, format: FileFormat = 'txt'): string {
  if (!doc.title) return `${doc.text}\n`;
  return format === 'md' ? `# ${doc.title}\n\n${doc.text}\n` : `${doc.title}\n\n${doc.text}\n`;
}

/**
 * PubMedQA's 500 labelled questions in the same shape: each question's own abstract (its contexts, as
 * bench/harness/query-stack.ts uploads them, without the conclusion) is the one relevant document. The corpus is
 * those 500 abstracts.
 */
export function loadPubmedqa(file: string, limitQueries: number | undefined): Scifact {
  const entries = Object.entries(
    JSON.parse(readFileSync(file, 'utf8')) as Record<string, { QUESTION: string; CONTEXTS: string[] }>,
  );
  const docs = entries.map(([id, entry]): Doc => ({ id: `pubmedqa-${id}`, title: '', text: entry.CONTEXTS.join('\n\n') }));
  const chosen = entries.slice(0, limitQueries);
  return {
    docs,
    corpusSize: docs.length,
    queries: chosen.map(([id, entry]) => ({ id, text: entry.QUESTION.replace(/\s+/gu, ' ').trim() })),
    qrels: new Map(chosen.map(([id]) => [id, new Map([[`pubmedqa-${id}`, 1]])])),
  };
}
