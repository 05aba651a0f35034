/** The command line of bench/retrieval/retrieval.ts (its header describes the flags). */
import { fusionName, parseFusion } from '#retrieval/fusion.ts';
import { oneOf, readFlags, someOf, text, whole } from '../harness/flags.ts';

const BACKENDS = ['sparse', 'hybrid'] as const;
export const NO_PREFIX = 'noprefix';
const DATASETS = ['scifact', 'pubmedqa'] as const;
const SHARED_DATA = new URL('../../../shared/data/', import.meta.url).pathname;
const STRATEGIES = ['similarity', 'mmr', 'threshold'] as const;
export type Backend = (typeof BACKENDS)[number];
export type Strategy = (typeof STRATEGIES)[number];

export function readRetrievalFlags() {
  const flags = readFlags({
    dataset: someOf('scifact', DATASETS),
    format: oneOf('txt', ['txt', 'md']),
    data: text(),
    'limit-docs': whole(undefined, 1),
    'limit-queries': whole(undefined, 1),
    backends: someOf('sparse,hybrid', BACKENDS),
    strategies: someOf('similarity,mmr', STRATEGIES),
    fusions: text('sparse,dense,rrf,dbsf,convex:0.3,convex:0.5,convex:0.7'),
    'chunk-size': whole('8000', 100, 8000),
    'top-k': whole('50', 10, 50),
    'upload-concurrency': whole('8', 1, 64),
    'max-pending': whole('64', 1, 10_000),
    'query-concurrency': whole('8', 1, 64),
    'poll-ms': whole('250', 10, 10_000),
    'timeout-min': whole('90', 1, 24 * 60),
    'latency-queries': whole('200'),
    out: text(),
  });
  if (flags.dataset.length !== 1) throw new Error('--dataset: one of scifact, pubmedqa');
  const dataset = flags.dataset[0] as (typeof DATASETS)[number];
  return {
    dataset,
    /** How each abstract is uploaded: text with the title as its first line, or Markdown with it as a heading. */
    format: flags.format as 'txt' | 'md',
    data: flags.data ?? (dataset === 'scifact' ? `${SHARED_DATA}scifact` : `${SHARED_DATA}pubmedqa/pqal_dev.json`),
    limitDocs: flags['limit-docs'],
    limitQueries: flags['limit-queries'],
    backends: flags.backends,
    strategies: flags.strategies,
    /**
     * On the hybrid stack: each RETRIEVAL_FUSION to query the one ingested index with; `<fusion>/noprefix` asks
     * the same with questions embedded bare (EMBEDDING_QUERY_PREFIX=none), to weigh the model's query instruction.
     */
    fusions: (flags.fusions as string).split(',').map((value) => {
      const [name = '', variant] = value.split('/');
      const fusion = parseFusion(name);
      if (!fusion || (variant !== undefined && variant !== NO_PREFIX))
        throw new Error(
          `--fusions: ${value} is not rrf, dbsf, dense, sparse, convex:<0–1> or dbsf:<0–1>, optionally /${NO_PREFIX}`,
        );
      return variant ? `${fusionName(fusion)}/${variant}` : fusionName(fusion);
    }),
    chunkSize: flags['chunk-size'],
    topK: flags['top-k'],
    uploadConcurrency: flags['upload-concurrency'],
    /** Unfinished jobs allowed at once: never fewer than the uploads in flight. */
    maxPending: Math.max(flags['upload-concurrency'], flags['max-pending']),
    queryConcurrency: flags['query-concurrency'],
    pollMs: flags['poll-ms'],
    timeoutMs: flags['timeout-min'] * 60_000,
    latencyQueries: flags['latency-queries'],
    out: flags.out,
  };
}

export type RetrievalSettings = ReturnType<typeof readRetrievalFlags>;
