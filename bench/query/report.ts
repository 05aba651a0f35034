/** The figures of bench/query/query.ts: one level's summary, as printed and as written to JSON. */
import { log } from '../harness/format.ts';
import type { Sample } from '../harness/query-client.ts';
import type { CpuWindow, Measured } from '../harness/query-measure.ts';
import { percentile } from '../harness/stats.ts';

interface Figure {
  label: string;
  of: (m: Measured) => number | null;
  /** Measured only when one request runs at a time. */
  concurrencyOne?: true;
}

/** Every figure with its p50 and p99, in the order they are printed and written. */
const FIGURES = {
  clientTtft: { label: 'client TTFT (start → first token)', of: (m) => m.clientTtft },
  reportedTtft: { label: 'reported time_to_first_token_ms', of: (m) => m.sample.reportedTtftMs },
  e2e: { label: 'end to end (start → done)', of: (m) => m.e2e },
  metadata: { label: 'start → metadata', of: (m) => (m.sample.metadata as number) - m.sample.start },
  embedding: { label: 'reported embedding_latency_ms', of: (m) => m.sample.embeddingMs },
  retrieval: { label: 'reported retrieval_latency_ms', of: (m) => m.sample.retrievalMs },
  model: { label: 'model call (proxy)', of: (m) => m.modelMs },
  modelFirstContent: {
    label: 'model call → first content (proxy)',
    of: (m) => (m.call.firstContent === null ? null : m.call.firstContent - m.call.start),
  },
  generation: { label: 'reported generation_latency_ms', of: (m) => m.sample.generationMs },
  overhead: { label: 'service overhead', of: (m) => m.overhead },
  preOverhead: { label: '  before metadata', of: (m) => m.preOverhead },
  streamOverhead: { label: '  metadata → done', of: (m) => m.streamOverhead },
  db: { label: 'Postgres wait (own connections)', of: (m) => m.dbMs, concurrencyOne: true },
  dbBeforeMetadata: { label: '  before metadata', of: (m) => m.dbBeforeMetadataMs, concurrencyOne: true },
  dbConnect: { label: '  connection start-up', of: (m) => m.dbConnectMs, concurrencyOne: true },
  overheadWithoutDb: {
    label: 'service overhead without Postgres',
    of: (m) => (m.dbMs === null ? null : m.overhead - m.dbMs),
    concurrencyOne: true,
  },
} satisfies Record<string, Figure>;

type Stats = Record<keyof typeof FIGURES, { p50: number; p99: number }>;

const pickOf = (measured: Measured[], f: (m: Measured) => number | null) =>
  measured.map(f).filter((v): v is number => v !== null);
const p50 = (values: number[]) => percentile(values, 50);

function statsOf(measured: Measured[]): Stats {
  return Object.fromEntries(
    Object.entries(FIGURES).map(([name, figure]) => {
      const values = pickOf(measured, figure.of);
      return [name, { p50: p50(values), p99: percentile(values, 99) }];
    }),
  ) as Stats;
}

/** Medians of the differences between what `done` reports and what the client and the proxy measured. */
function differencesOf(measured: Measured[]) {
  const median = (f: (m: Measured) => number | null) => p50(pickOf(measured, f));
  return {
    // What the client waits for before the first token that the reported TTFT leaves out, by design.
    clientTtftMinusReported: median((m) => m.clientTtft - (m.sample.reportedTtftMs as number)),
    // Over the span the reported TTFT covers (after metadata): should be about zero.
    clientTtftAfterMetadataMinusReported: median(
      (m) => (m.sample.firstToken as number) - (m.sample.metadata as number) - (m.sample.reportedTtftMs as number),
    ),
    clientGenerationMinusReported: median(
      (m) => (m.sample.done as number) - (m.sample.metadata as number) - (m.sample.generationMs as number),
    ),
    reportedGenerationMinusModel: median((m) => (m.sample.generationMs as number) - m.modelMs),
    reportedTtftMinusModelFirstContent: median((m) =>
      m.call.firstContent === null ? null : (m.sample.reportedTtftMs as number) - (m.call.firstContent - m.call.start),
    ),
  };
}

export interface LevelResult {
  database: string;
  delayMs: number;
  concurrency: number;
  requests: number;
  errors: number;
  errorExamples: string[];
  wallS: number;
  throughput: number;
  loadavgBefore: number[];
  loadavgAfter: number[];
  topSourceHitRate: number;
  tokensP50: number;
  healthFloor: { p50: number; p99: number };
  dbBusyShare: number;
  cpu: CpuWindow;
  stats: Stats;
  differences: ReturnType<typeof differencesOf>;
}

export interface Level {
  database: string;
  delayMs: number;
  concurrency: number;
  samples: Sample[];
  measured: Measured[];
  wallMs: number;
  load: [number[], number[]];
}

export function summarize(
  { database, delayMs, concurrency, samples, measured, wallMs, load }: Level,
  extra: { healthFloor: { p50: number; p99: number }; dbBusyShare: number; cpu: CpuWindow },
): LevelResult {
  const failed = samples.filter((s) => s.error);
  return {
    database,
    delayMs,
    concurrency,
    requests: samples.length,
    errors: failed.length,
    errorExamples: [...new Set(failed.map((s) => s.error as string))].slice(0, 3),
    wallS: wallMs / 1000,
    throughput: samples.length / (wallMs / 1000),
    loadavgBefore: load[0],
    loadavgAfter: load[1],
    topSourceHitRate: measured.filter((m) => m.sample.topSource === m.sample.question.file).length / Math.max(1, measured.length),
    tokensP50: p50(measured.map((m) => m.sample.tokens)),
    ...extra,
    stats: statsOf(measured),
    differences: differencesOf(measured),
  };
}

const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(1) : '–');

export function report(result: LevelResult) {
  log(
    `\n== DEVSTACK_TOKEN_DELAY_MS=${result.delayMs}, ${result.database}, concurrency ${result.concurrency}: ${result.requests} requests, ` +
      `${result.errors} errors, ${result.wallS.toFixed(1)} s, ${result.throughput.toFixed(1)} req/s, ` +
      `load ${result.loadavgBefore.map((l) => l.toFixed(2)).join(' ')} → ${result.loadavgAfter.map((l) => l.toFixed(2)).join(' ')}`,
  );
  for (const example of result.errorExamples) log(`   error: ${example}`);
  log(
    `   top source is the question's abstract: ${(result.topSourceHitRate * 100).toFixed(1)} %; tokens per answer p50 ${result.tokensP50}`,
  );
  log(`   GET /health round trip (before the level): ${ms(result.healthFloor.p50)} / ${ms(result.healthFloor.p99)} ms`);
  log(`   Postgres busy (any API connection waiting): ${(result.dbBusyShare * 100).toFixed(1)} % of the wall time`);
  log(
    `   CPU per request: ${Object.entries(result.cpu.perRequestMs)
      .map(([name, value]) => `${name} ${value.toFixed(1)} ms`)
      .join('; ')}`,
  );
  log('   figure (ms)                                  p50 / p99');
  for (const [name, figure] of Object.entries(FIGURES) as [keyof typeof FIGURES, Figure][]) {
    if (figure.concurrencyOne && result.concurrency !== 1) continue;
    const value = result.stats[name];
    log(`   ${figure.label.padEnd(44)} ${ms(value.p50)} / ${ms(value.p99)}`);
  }
  log('   median differences (ms):');
  for (const [name, value] of Object.entries(result.differences)) log(`     ${name.padEnd(42)} ${ms(value)}`);
}

/** One request's figures, for the JSON. */
export function perRequestRow(delayMs: number, concurrency: number, m: Measured) {
  return {
    delayMs,
    concurrency,
    start: m.sample.start,
    e2e: m.e2e,
    clientTtft: m.clientTtft,
    metadata: (m.sample.metadata as number) - m.sample.start,
    embeddingMs: m.sample.embeddingMs,
    retrievalMs: m.sample.retrievalMs,
    modelMs: m.modelMs,
    generationMs: m.sample.generationMs,
    reportedTtftMs: m.sample.reportedTtftMs,
    overhead: m.overhead,
    preOverhead: m.preOverhead,
    streamOverhead: m.streamOverhead,
    dbMs: m.dbMs,
    dbConnectMs: m.dbConnectMs,
    tokens: m.sample.tokens,
  };
}
