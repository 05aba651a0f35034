/**
 * Is one fusion's nDCG@10 really above another's, or within what 809 queries can tell apart? Reads the JSON
 * that bench/retrieval/retrieval.ts (or bench/retrieval/rerank.ts) wrote and compares every pass with a baseline on the same
 * queries: the mean difference, queries better and worse, and a 95 % interval from a paired bootstrap
 * (10,000 resamples of the queries, a fixed seed so that a report can be reproduced).
 *
 *   npx tsx bench/retrieval/compare-runs.ts --file results.json [--baseline dbsf] [--metric ndcg10] [--against other.json]
 *
 * --against  take the baseline pass from another run of the same queries (another chunk size, another model), to
 *            compare two indexes rather than two fusions over one
 *
 * An interval that holds 0 means the two orders cannot be told apart on these queries.
 */
import { readFileSync } from 'node:fs';
import { seededRandom } from '../../devstack/harness/seeded-random.ts';
import { fail, readFlags, text } from '../harness/flags.ts';

interface PerQuery {
  id: string;
  [metric: string]: unknown;
}
interface Pass {
  fusion: string;
  strategy: string;
  perQuery: PerQuery[];
}

const flags = readFlags({ file: text(), baseline: text('dbsf'), metric: text('ndcg10'), against: text() });
const file =
  flags.file ?? fail('usage: npx tsx bench/retrieval/compare-runs.ts --file results.json [--baseline dbsf] [--metric ndcg10]');

const passesOf = (path: string) =>
  (JSON.parse(readFileSync(path, 'utf8')) as { results: { runs: Pass[] }[] }).results.flatMap((result) => result.runs);
const passes = passesOf(file);
const baseline = passesOf(flags.against ?? file).find((pass) => pass.fusion === flags.baseline);
if (!baseline) throw new Error(`no pass with fusion ${flags.baseline}: ${passes.map((p) => p.fusion).join(', ')}`);

const metricOf = (query: PerQuery) => Number(query[flags.metric as string]);
const byId = (pass: Pass) => new Map(pass.perQuery.map((query) => [query.id, metricOf(query)]));

function pairedInterval(differences: readonly number[], resamples = 10_000): [number, number] {
  // Seeded, so that two runs of this script print the same interval.
  const next = seededRandom(22);
  const means: number[] = [];
  for (let r = 0; r < resamples; r++) {
    let sum = 0;
    for (let i = 0; i < differences.length; i++) sum += differences[Math.floor(next() * differences.length)] as number;
    means.push(sum / differences.length);
  }
  means.sort((a, b) => a - b);
  return [means[Math.floor(resamples * 0.025)] as number, means[Math.floor(resamples * 0.975)] as number];
}

const base = byId(baseline);
const signed = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(4)}`;
console.log(`| pass | ${flags.metric} | against ${flags.baseline} | 95 % interval | better / worse / same |`);
console.log('|---|---:|---:|---|---|');
for (const pass of passes) {
  const differences: number[] = [];
  let better = 0;
  let worse = 0;
  for (const [id, value] of byId(pass)) {
    const against = base.get(id);
    if (against === undefined) continue;
    differences.push(value - against);
    if (value > against + 1e-9) better++;
    else if (value < against - 1e-9) worse++;
  }
  const mean = differences.reduce((sum, d) => sum + d, 0) / differences.length;
  const all = [...byId(pass).values()];
  const [low, high] = pairedInterval(differences);
  console.log(
    `| ${pass.fusion} (${pass.strategy}) | ${(all.reduce((s, v) => s + v, 0) / all.length).toFixed(4)} | ${signed(mean)} | ` +
      `${signed(low)} to ${signed(high)} | ${better} / ${worse} / ${differences.length - better - worse} |`,
  );
}
