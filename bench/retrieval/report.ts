/** What bench/retrieval/retrieval.ts prints and writes: a line per pass, the summary table, the JSON report. */
import { writeFileSync } from 'node:fs';
import { log } from '../harness/format.ts';
import type { Backend } from './flags.ts';
import type { IngestFigures } from './ingest.ts';
import type { StrategyRun } from './queries.ts';

export interface BackendRun {
  backend: Backend;
  embeddings: string;
  ingest: IngestFigures;
  runs: StrategyRun[];
}

const score = (n: number) => (Number.isFinite(n) ? n.toFixed(4) : 'n/a');
const latency = (figures: { p50: number; p99: number }) => `${figures.p50.toFixed(1)} / ${figures.p99.toFixed(1)} ms`;

export function reportPass(run: StrategyRun) {
  log(
    `[${run.backend}/${run.fusion}/${run.strategy}] nDCG@10 ${score(run.ndcg10)}  recall@50 ${score(run.recall50)}  hit@5 ${score(run.hit5)}  ` +
      `latency p50/p99 ${latency(run.latencyMs)}  ` +
      (run.sequentialLatencyMs ? `one at a time ${latency(run.sequentialLatencyMs)}  ` : '') +
      `(${(run.wallMs / 1000).toFixed(1)} s, ${run.empty} empty, ${run.unknownSources} unknown sources)`,
  );
}

/** A markdown table, a row per pass and one per backend that could not run. */
export function reportTable(results: BackendRun[], unavailable: Record<string, string>, queryConcurrency: number) {
  log();
  log(
    `| backend | fusion | strategy | nDCG@10 | recall@50 | hit@5 | p50 / p99, ${queryConcurrency} in flight | p50 / p99, one at a time | queries |`,
  );
  log(`|---|---|---|---:|---:|---:|---:|---:|---:|`);
  for (const backend of results) {
    for (const run of backend.runs) {
      log(
        `| ${run.backend} | ${run.fusion} | ${run.strategy} | ${score(run.ndcg10)} | ${score(run.recall50)} | ${score(run.hit5)} | ` +
          `${latency(run.latencyMs)} | ${run.sequentialLatencyMs ? latency(run.sequentialLatencyMs) : '—'} | ${run.queries} |`,
      );
    }
  }
  for (const [backend, reason] of Object.entries(unavailable)) log(`| ${backend} | — | — | ${reason} | | | | | |`);
}

export function writeReport(path: string, report: Record<string, unknown>) {
  writeFileSync(path, `${JSON.stringify(report, null, 1)}\n`);
  log(`wrote ${path}`);
}
