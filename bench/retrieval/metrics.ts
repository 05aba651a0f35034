/**
 * The ranking metrics of BEIR (pytrec_eval's trec_eval measures) and the reading of the BEIR files,
 * kept apart from bench/retrieval/retrieval.ts so that they can be tested without a stack.
 */

/** Graded judgements: query id → (document id → relevance). */
export type Qrels = Map<string, Map<string, number>>;

/**
 * A BEIR qrels file: tab-separated `query-id corpus-id score`, with a header line. Throws on a row
 * that is not three fields with a whole-number score, naming the line.
 */
export function parseQrels(text: string): Qrels {
  const qrels: Qrels = new Map();
  const lines = text.split(/\r?\n/);
  lines.forEach((line, index) => {
    if (line.trim() === '' || (index === 0 && line.startsWith('query-id'))) return;
    const fields = line.split('\t');
    const [query, doc, score] = fields;
    if (fields.length !== 3 || !query || !doc || !score || !/^-?\d+$/.test(score.trim())) {
      throw new Error(`qrels line ${index + 1}: expected "query-id<TAB>corpus-id<TAB>score", got ${JSON.stringify(line)}`);
    }
    const judged = qrels.get(query) ?? new Map<string, number>();
    judged.set(doc, Number(score));
    qrels.set(query, judged);
  });
  return qrels;
}

/**
 * nDCG@k as trec_eval's ndcg_cut computes it for BEIR: the gain of a result is its judged relevance
 * (0 when unjudged), discounted by log2(rank + 1); the ideal ranking is the query's judged documents
 * by relevance, so relevant documents that were never retrieved count against the score.
 */
export function ndcgAtK(ranked: readonly string[], judged: ReadonlyMap<string, number>, k: number): number {
  const dcg = ranked.slice(0, k).reduce((sum, doc, i) => sum + Math.max(0, judged.get(doc) ?? 0) / Math.log2(i + 2), 0);
  const ideal = [...judged.values()]
    .filter((relevance) => relevance > 0)
    .sort((a, b) => b - a)
    .slice(0, k)
    .reduce((sum, relevance, i) => sum + relevance / Math.log2(i + 2), 0);
  return ideal === 0 ? 0 : dcg / ideal;
}

/** The share of the query's relevant documents (relevance > 0) among the first k results. */
export function recallAtK(ranked: readonly string[], judged: ReadonlyMap<string, number>, k: number): number {
  const relevant = [...judged].filter(([, relevance]) => relevance > 0).map(([doc]) => doc);
  if (relevant.length === 0) return 0;
  const top = new Set(ranked.slice(0, k));
  return relevant.filter((doc) => top.has(doc)).length / relevant.length;
}

/**
 * Chunk results to a document ranking: each document once, at the place of its first chunk. The API
 * returns chunks best first (or in MMR's selection order), so the first chunk of a document is also
 * the one with its highest score under similarity.
 */
export function documentRanking(sources: readonly { source: string }[], toDocId: (source: string) => string): string[] {
  const seen = new Set<string>();
  for (const { source } of sources) seen.add(toDocId(source));
  return [...seen];
}
