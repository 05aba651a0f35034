/**
 * How an embedding model spreads its scores, for the threshold strategy's dense cut-off (src/retrieval/dense-cutoff.ts):
 * the first N SciFact training claims against their judged abstract and an unrelated one, as Upstash reports COSINE
 * ((1 + cos) / 2), with the query instruction the API would put before them (src/retrieval/query-instruction.ts).
 *
 *   npx tsx bench/retrieval/embedding-scores.ts [--model bge-small-en-v1.5] [--queries 100]
 */
import { join } from 'node:path';
import { queryPrefixFor } from '#retrieval/query-instruction.ts';
import { loadEmbeddingEngine } from '../../devstack/models/embedding-engine.ts';
import { resolveEmbeddingSource } from '../../devstack/models/embedding-source.ts';
import { defaultSharedModelsDir } from '../../devstack/models/server.ts';
import { fail, readFlags, text, whole } from '../harness/flags.ts';
import { loadScifact } from './scifact.ts';

const flags = readFlags({ model: text('bge-small-en-v1.5'), queries: whole('100', 1, 809) });
const cacheDir = join(process.cwd(), '.data', 'models');
const resolved = await resolveEmbeddingSource({
  embeddingModel: flags.model,
  sharedModelsDir: defaultSharedModelsDir(),
  cacheDir,
  allowDownload: false,
});
if ('unavailable' in resolved) fail(resolved.unavailable);
const { source } = resolved as { source: Parameters<typeof loadEmbeddingEngine>[0] };
const engine = await loadEmbeddingEngine(source, cacheDir);
const prefix = queryPrefixFor(source.name, undefined);

const upstash = (a: Float32Array, b: Float32Array) => (1 + a.reduce((sum, v, i) => sum + v * (b[i] as number), 0)) / 2;
const data = loadScifact(new URL('../../../shared/data/scifact', import.meta.url).pathname, undefined, flags.queries);
const byId = new Map(data.docs.map((d) => [d.id, d]));
const passage = (d: { title: string; text: string }) => `${d.title}\n\n${d.text}`.slice(0, 1000);
const relevant: number[] = [];
const unrelated: number[] = [];
for (const [i, query] of data.queries.entries()) {
  const judged = byId.get([...(data.qrels.get(query.id) as Map<string, number>).keys()][0] as string);
  // A fixed stride through the corpus: an abstract about something else, the same for every run.
  const other = data.docs[(i * 37 + 11) % data.docs.length];
  if (!judged || !other) continue;
  const { vectors } = await engine.embed([`${prefix}${query.text}`, passage(judged), passage(other)]);
  const [q, r, u] = vectors as [Float32Array, Float32Array, Float32Array];
  relevant.push(upstash(q, r));
  unrelated.push(upstash(q, u));
}
await engine.close();
const at = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.floor(p * (values.length - 1))]?.toFixed(3);
console.log(`${source.name}, ${relevant.length} claims, instruction: ${prefix ? 'yes' : 'none'}`);
console.log(`relevant  p10 ${at(relevant, 0.1)}  p50 ${at(relevant, 0.5)}  p90 ${at(relevant, 0.9)}`);
console.log(`unrelated p50 ${at(unrelated, 0.5)}  p90 ${at(unrelated, 0.9)}  max ${at(unrelated, 1)}`);
