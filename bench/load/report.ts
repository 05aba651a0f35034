/** bench/load/load.ts's table: each figure's median over the rounds, per checkout, and the ratio of the last to the first. */

import { median } from '../harness/stats.ts';
import type { RunResult } from './run.ts';

interface Row {
  label: string;
  of: (run: RunResult) => number | undefined;
  digits?: number;
}

/** The rows of an upload phase: `of` picks the phase. */
function uploadRows(name: string, of: (run: RunResult) => RunResult['uploads'] | null | undefined): Row[] {
  return [
    { label: `${name}: errors`, of: (r) => of(r)?.errors, digits: 0 },
    { label: `${name}: acceptance p50 (ms)`, of: (r) => of(r)?.acceptanceMs.p50 },
    { label: `${name}: acceptance p99 (ms)`, of: (r) => of(r)?.acceptanceMs.p99 },
    { label: `${name}: end to end, docs/s`, of: (r) => of(r)?.docsPerS },
    { label: `${name}: upload → terminal p50 (ms)`, of: (r) => of(r)?.endToEndMs.p50, digits: 0 },
    { label: `${name}: upload → terminal p99 (ms)`, of: (r) => of(r)?.endToEndMs.p99, digits: 0 },
    {
      label: `${name}: deployment CPU per document (ms)`,
      of: (r) => {
        const phase = of(r);
        return phase ? (1000 * phase.cpu.deploymentSeconds) / phase.files : undefined;
      },
      digits: 0,
    },
    { label: `${name}: devstack process CPU (%)`, of: (r) => of(r)?.cpu.percent['devstack (node)'], digits: 0 },
    { label: `${name}: devstack main thread CPU (%)`, of: (r) => of(r)?.cpu.percent['  devstack thread node'], digits: 0 },
    { label: `${name}: devstack event-loop delay p99 (ms)`, of: (r) => of(r)?.lag.p99 },
    { label: `${name}: devstack PGlite thread CPU (%)`, of: (r) => of(r)?.cpu.percent['  devstack thread pglite'], digits: 0 },
    { label: `${name}: ingest workerd CPU (%)`, of: (r) => of(r)?.cpu.percent['ingest: workerd'], digits: 0 },
    { label: `${name}: API workerd CPU (%)`, of: (r) => of(r)?.cpu.percent['api: workerd'], digits: 0 },
  ];
}

const ROWS: Row[] = [
  ...uploadRows('burst uploads', (r) => r.uploads),
  ...uploadRows('steady uploads', (r) => r.steady),
  { label: 'queries: errors', of: (r) => r.queries?.errors, digits: 0 },
  { label: 'queries: TTFT p50 (ms)', of: (r) => r.queries?.ttftMs.p50 },
  { label: 'queries: TTFT p99 (ms)', of: (r) => r.queries?.ttftMs.p99 },
  { label: "queries: model's own TTFT p50 (ms)", of: (r) => r.queries?.modelTtftMs.p50 },
  { label: 'queries: TTFT overhead p50 (ms)', of: (r) => r.queries?.ttftOverheadMs.p50 },
  { label: 'queries: TTFT overhead p99 (ms)', of: (r) => r.queries?.ttftOverheadMs.p99 },
  { label: 'queries: service overhead p50 (ms)', of: (r) => r.queries?.overheadMs.p50 },
  { label: 'queries: service overhead p99 (ms)', of: (r) => r.queries?.overheadMs.p99 },
  {
    label: 'queries: deployment CPU per request (ms)',
    of: (r) => (r.queries ? (1000 * r.queries.cpu.deploymentSeconds) / r.queries.requests : undefined),
    digits: 1,
  },
  { label: 'queries: devstack process CPU (%)', of: (r) => r.queries?.cpu.percent['devstack (node)'], digits: 0 },
  { label: 'queries: devstack event-loop delay p99 (ms)', of: (r) => r.queries?.lag.p99 },
  { label: 'queries: API workerd CPU (%)', of: (r) => r.queries?.cpu.percent['api: workerd'], digits: 0 },
];

const cell = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : '–');

/** One column per checkout, in the order first seen; a ratio column (last ÷ first) when there are two or more. */
export function table(runs: RunResult[]): string {
  const labels = [...new Set(runs.map((r) => r.label))];
  const rounds = (label: string) => runs.filter((r) => r.label === label).length;
  const head = labels.map((l) => `${l} (median of ${rounds(l)})`);
  const ratio = labels.length > 1;
  const lines = [
    `| figure | ${head.join(' | ')} |${ratio ? ` ${labels.at(-1)} ÷ ${labels[0]} |` : ''}`,
    `|---|${labels.map(() => '---:').join('|')}|${ratio ? '---:|' : ''}`,
  ];
  for (const row of ROWS) {
    const medians = labels.map((label) => {
      const values = runs
        .filter((r) => r.label === label)
        .map(row.of)
        .filter((v): v is number => v !== undefined && Number.isFinite(v));
      return values.length > 0 ? median(values) : Number.NaN;
    });
    const first = medians[0] as number;
    const last = medians.at(-1) as number;
    const ratioCell = ratio ? ` ${first > 0 && Number.isFinite(last) ? `${(last / first).toFixed(2)}×` : '–'} |` : '';
    lines.push(`| ${row.label} | ${medians.map((m) => cell(m, row.digits)).join(' | ')} |${ratioCell}`);
  }
  return lines.join('\n');
}

/** Every round's own figures, for the reader who wants the spread behind the medians. */
export function roundsTable(runs: RunResult[]): string {
  const lines = [
    '| checkout | round | burst: acceptance p50 / p99 (ms) | burst: docs/s | steady: acceptance p50 / p99 (ms) | steady: docs/s | TTFT p50 / p99 (ms) | TTFT overhead p50 (ms) | upload errors | query errors |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of runs) {
    const q = r.queries;
    const s = r.steady;
    lines.push(
      `| ${r.label} | ${r.round} | ${cell(r.uploads.acceptanceMs.p50, 0)} / ${cell(r.uploads.acceptanceMs.p99, 0)} | ` +
        `${cell(r.uploads.docsPerS)} | ${s ? `${cell(s.acceptanceMs.p50, 0)} / ${cell(s.acceptanceMs.p99, 0)}` : '–'} | ` +
        `${s ? cell(s.docsPerS) : '–'} | ${q ? `${cell(q.ttftMs.p50, 0)} / ${cell(q.ttftMs.p99, 0)}` : '–'} | ` +
        `${q ? cell(q.ttftOverheadMs.p50) : '–'} | ${r.uploads.errors + (s?.errors ?? 0)} | ${q?.errors ?? '–'} |`,
    );
  }
  return lines.join('\n');
}
