/**
 * What an upload with a large form field before its file, and an unsigned POST to a QStash worker,
 * cost the API and the workers before they are refused: CPU, memory and bytes read, each case in a
 * fresh Node process, for the working tree and for another checkout (--root) of the same layout.
 *
 *   npx tsx bench/hostile/refusals.ts [--root /path/to/checkout] [--mb 50]
 */
import { spawnSync } from 'node:child_process';
import { readFlags, text, whole } from '../harness/flags.ts';
import { machine } from '../harness/machine.ts';

const flags = readFlags({ root: text(), mb: whole('50', 1, 200) });
const here = new URL('../..', import.meta.url).pathname;
const probe = new URL('./refusals-probe.ts', import.meta.url).pathname;

const roots = [['working tree', here], ...(flags.root ? [[`--root ${flags.root}`, flags.root]] : [])];
const { cores, cpu, node } = machine();
console.log(`machine: ${cores} cores, ${cpu}, Node ${node}`);
console.log(`| case | code | CPU | peak memory above baseline | bytes read | answer |`);
console.log('|---|---|---:|---:|---:|---|');
for (const kase of ['field-before-file', 'unsigned-qstash']) {
  for (const [label, root] of roots) {
    const run = spawnSync(process.execPath, ['--import', 'tsx', probe, kase, root as string, String(flags.mb)], {
      cwd: here,
      encoding: 'utf8',
      timeout: 300_000,
    });
    const result = run.stdout.trim().split('\n').at(-1) ?? '';
    try {
      const r = JSON.parse(result) as { cpuMs: number; peakMiB: number; readMiB: number; answer: string };
      console.log(
        `| ${kase} (${flags.mb} MB) | ${label} | ${(r.cpuMs / 1000).toFixed(2)} s | ${r.peakMiB.toFixed(1)} MiB | ${r.readMiB.toFixed(1)} MiB | ${r.answer} |`,
      );
    } catch {
      console.log(`| ${kase} | ${label} | failed: ${(run.stderr || result).slice(0, 200).replace(/\n/g, ' ')} | | | |`);
    }
  }
}
