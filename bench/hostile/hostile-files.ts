/**
 * The hostile-file benchmark: each file of devstack/harness/hostile-files.ts through the extract
 * steps (bench/hostile/probe.ts, a fresh Node process per file), with its parse CPU time, peak
 * memory and how its job would end. A probe past `--timeout` seconds is killed and reported as
 * such, with the CPU and memory it had used by then.
 *
 *   npx tsx bench/hostile/hostile-files.ts [--root <checkout>] [--timeout 30] [--only a,b] [--out file.json]
 *
 * `--root` runs another checkout's parsers on the same files: `git archive HEAD | tar -x -C DIR`
 * and a symlink to node_modules give the code before a change.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { HOSTILE_FILES, type HostileFile } from '../../devstack/harness/hostile-files.ts';
import { readFlags, text, whole } from '../harness/flags.ts';
import { fixed, log, mib } from '../harness/format.ts';
import { load, machine } from '../harness/machine.ts';
import type { ProbeReady, ProbeResult } from './probe.ts';

const PROBE = new URL('./probe.ts', import.meta.url).pathname;
const HEAP_MB = 4096;

interface Row {
  name: string;
  what: string;
  bytes: number;
  /** Parse CPU in ms, or the CPU used by the time the probe was killed. */
  cpuMs: number;
  maxStepCpuMs: number;
  /** Extract steps run (a PDF's page ranges); 0 when the probe did not finish. */
  steps: number;
  /** Peak resident memory above the probe's baseline (modules and pdf.js loaded). */
  peakBytes: number;
  /** The largest growth within one step (one worker invocation), for a document read in several. */
  maxStepPeakBytes: number;
  outcome: string;
  killed: boolean;
}

/** User plus system CPU of a live process, in ms (Linux counts in 1/100 s). */
function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function peakRss(pid: number): number {
  const match = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmHWM:\s+(\d+) kB/m);
  return match ? Number(match[1]) * 1024 : 0;
}

function probe(root: string, file: HostileFile, path: string, timeoutMs: number): Promise<Row> {
  return new Promise((done, reject) => {
    const child = spawn(
      process.execPath,
      [
        `--max-old-space-size=${HEAP_MB}`,
        '--expose-gc',
        '--import',
        'tsx',
        PROBE,
        '--root',
        root,
        '--file',
        path,
        '--type',
        file.type,
      ],
      { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const pid = child.pid as number;
    let out = '';
    let err = '';
    let ready: ProbeReady | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let peak = 0;
    let cpuAtKill = 0;
    let killed = false;
    // The kernel's peak is read while the probe lives; an out-of-memory crash leaves nothing to read after.
    const watch = setInterval(() => {
      try {
        peak = Math.max(peak, peakRss(pid));
      } catch {
        // ended
      }
    }, 50);
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk;
      if (!ready && out.includes('\n')) {
        ready = JSON.parse(out.split('\n')[0]!) as ProbeReady;
        peak = 0;
        timer = setTimeout(() => {
          try {
            cpuAtKill = processCpuMs(pid);
            peak = Math.max(peak, peakRss(pid));
          } catch {
            // ended meanwhile
          }
          killed = true;
          child.kill('SIGKILL');
        }, timeoutMs);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearInterval(watch);
      if (timer) clearTimeout(timer);
      const base = { name: file.name, what: file.what, bytes: readFileSync(path).byteLength };
      const peakBytes = ready ? Math.max(0, peak - ready.rss) : 0;
      const line = out.trim().split('\n').at(-1) ?? '';
      if (killed) {
        const cpuMs = ready ? cpuAtKill - ready.cpuMs : cpuAtKill;
        return done({
          ...base,
          cpuMs,
          maxStepCpuMs: cpuMs,
          steps: 0,
          peakBytes,
          maxStepPeakBytes: peakBytes,
          outcome: 'did not finish',
          killed: true,
        });
      }
      if (code !== 0 || !line.includes('"result"')) {
        const oom = /heap out of memory|Allocation failed/i.test(err);
        const outcome = oom
          ? `crashed: out of memory (${HEAP_MB} MB heap)`
          : `crashed (${signal ?? code}): ${err.trim().split('\n').at(-1)}`;
        return done({
          ...base,
          cpuMs: Number.NaN,
          maxStepCpuMs: Number.NaN,
          steps: 0,
          peakBytes,
          maxStepPeakBytes: peakBytes,
          outcome,
          killed: false,
        });
      }
      const result = JSON.parse(line) as ProbeResult;
      const steps = result.steps > 1 ? `${result.steps} steps, ` : '';
      const message = result.message.length > 90 ? `${result.message.slice(0, 89)}…` : result.message;
      done({
        ...base,
        cpuMs: result.cpuMs,
        maxStepCpuMs: result.maxStepCpuMs,
        steps: result.steps,
        // The probe resets the counter between steps; what it saw itself covers what polling missed.
        peakBytes: Math.max(peakBytes, (result.peakRss ?? 0) - (ready?.rss ?? 0)),
        maxStepPeakBytes: result.maxStepPeakBytes ?? 0,
        outcome: `${result.status} (${steps}${result.chunks} chunks)${message ? `: ${message}` : ''}`,
        killed: false,
      });
    });
  });
}

function size(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${fixed(bytes / 1024 / 1024, 1)} MB` : `${fixed(bytes / 1024, 0)} KB`;
}

function memory(row: Row): string {
  const peak = `${mib(row.peakBytes)} MiB`;
  return row.steps > 1 ? `${peak} (largest step ${mib(row.maxStepPeakBytes)} MiB)` : peak;
}

function seconds(row: Row, timeoutS: number): string {
  if (row.killed) return `killed at ${timeoutS} s (${fixed(row.cpuMs / 1000, 1)} s CPU by then)`;
  if (Number.isNaN(row.cpuMs)) return '—';
  const total = `${fixed(row.cpuMs / 1000, 2)} s`;
  return row.steps > 1 ? `${total} (longest step ${fixed(row.maxStepCpuMs / 1000, 2)} s)` : total;
}

async function main() {
  const flags = readFlags({ root: text(process.cwd()), timeout: whole('30', 1), only: text(), out: text() });
  const root = resolve(flags.root);
  const only = flags.only?.split(',');
  const files = HOSTILE_FILES.filter((file) => !only || only.includes(file.name));
  const dir = mkdtempSync(join(tmpdir(), 'hostile-files-'));
  const m = machine();
  log(`# Hostile files through the parse step (code under test: ${root})`);
  log(`\n${m.cpu}, ${m.cores} of ${m.cpus} CPUs, ${fixed(m.memGiB, 0)} GiB, Node ${m.node}; load ${load().join(' ')}`);
  log(`Each file in a fresh process (heap limit ${HEAP_MB} MB), killed after ${flags.timeout} s of wall time.`);
  log('\n| input | size | parse CPU | peak memory | outcome |\n|---|---:|---:|---:|---|');
  const rows: Row[] = [];
  try {
    for (const file of files) {
      const path = join(dir, `${file.name}.${file.type}`);
      writeFileSync(path, file.bytes());
      const row = await probe(root, file, path, flags.timeout * 1000);
      rows.push(row);
      log(`| ${row.name} | ${size(row.bytes)} | ${seconds(row, flags.timeout)} | ${memory(row)} | ${row.outcome} |`);
      rmSync(path);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  log('\nInputs:');
  for (const row of rows) log(`- ${row.name}: ${row.what}`);
  if (flags.out) writeFileSync(flags.out, `${JSON.stringify({ root, machine: m, load: load(), rows }, null, 2)}\n`);
}

await main();
