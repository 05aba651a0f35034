import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkTraces, tracesOf } from '../../deploy/traces.ts';
import { WORKERS } from '../../deploy/workers.ts';

const root = new URL('../../', import.meta.url).pathname;

describe('Workers traces', () => {
  it('are on in every wrangler.toml, and --check prints each worker’s sampling rate', () => {
    const result = checkTraces(root, WORKERS);
    expect(result.status).toBe('pass');
    for (const worker of WORKERS) expect(result.message).toMatch(new RegExp(`${worker.name} \\d+(\\.\\d)? %`));
  });

  it('reads [observability.traces] only, and refuses a rate outside 0–1', () => {
    const toml = (traces: string) =>
      `name = "w"\n[observability]\nenabled = true\nhead_sampling_rate = 1\n${traces}[other]\nx = 1\n`;
    expect(tracesOf(toml('[observability.traces]\nenabled = true\nhead_sampling_rate = 0.25 # a quarter\n'))).toEqual({
      enabled: true,
      sampling: 0.25,
    });
    expect(tracesOf(toml(''))).toEqual({ enabled: false, sampling: undefined });
    const dir = mkdtempSync(join(tmpdir(), 'traces-'));
    writeFileSync(join(dir, 'a.toml'), toml('[observability.traces]\nenabled = true\nhead_sampling_rate = 2\n'));
    writeFileSync(join(dir, 'b.toml'), toml(''));
    const worker = (name: string, config: string) => ({ name, config });
    expect(checkTraces(dir, [worker('a', 'a.toml')])).toMatchObject({ status: 'fail' });
    expect(checkTraces(dir, [worker('b', 'b.toml')])).toMatchObject({
      status: 'warn',
      message: expect.stringContaining('b off'),
    });
  });
});
