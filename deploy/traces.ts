import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CheckResult } from './check-result.ts';

export interface TracesSetting {
  enabled: boolean;
  /** The share of requests traced, 0–1; undefined when the config does not say. */
  sampling: number | undefined;
}

/**
 * A worker's Workers traces, as its wrangler config's `[observability.traces]` has them. wrangler reads
 * the sampling rate from the config alone (no variable can set it), so the operator edits it there; this
 * reads it back for `npm run deploy -- --check`.
 */
export function tracesOf(toml: string): TracesSetting {
  const section = /^\[observability\.traces\]\s*$([\s\S]*?)(?=^\[|(?![\s\S]))/m.exec(toml)?.[1] ?? '';
  const value = (key: string) => new RegExp(`^\\s*${key}\\s*=\\s*([^#\\n]+)`, 'm').exec(section)?.[1]?.trim();
  const rate = value('head_sampling_rate');
  return { enabled: value('enabled') === 'true', sampling: rate === undefined ? undefined : Number(rate) };
}

/** One line for `--check`: every worker's traces, on and at which rate; a rate outside 0–1 fails, traces off warns. */
export function checkTraces(root: string, workers: readonly { name: string; config: string }[]): CheckResult {
  const settings = workers.map((worker) => ({ worker, ...tracesOf(readFileSync(join(root, worker.config), 'utf8')) }));
  const bad = settings.filter(({ sampling }) => sampling !== undefined && !(sampling >= 0 && sampling <= 1));
  if (bad.length > 0) {
    return {
      status: 'fail',
      subject: 'traces',
      message: `head_sampling_rate under [observability.traces] must be between 0 and 1 in ${bad.map((s) => s.worker.config).join(', ')}`,
    };
  }
  const off = settings.filter(({ enabled }) => !enabled);
  const rates = settings.map(({ worker, enabled, sampling }) =>
    enabled ? `${worker.name} ${Math.round((sampling ?? 1) * 1000) / 10} %` : `${worker.name} off`,
  );
  return {
    status: off.length > 0 ? 'warn' : 'pass',
    subject: 'traces',
    message: `requests traced: ${rates.join(', ')} (head_sampling_rate under [observability.traces] in each wrangler.toml)`,
  };
}
