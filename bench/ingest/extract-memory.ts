/** The memory of one extract invocation for bench/ingest/ingest.ts: bench/ingest/extract-probe.ts in a fresh Node process per file. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fixed, log, MB, mib } from '../harness/format.ts';
import type { ProbeResult } from './extract-probe.ts';

const root = new URL('../..', import.meta.url).pathname;

function runProbe(path: string): Promise<ProbeResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', join(root, 'bench/ingest/extract-probe.ts'), path], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      const line = out.trim().split('\n').at(-1) ?? '';
      if (code !== 0 || !line.startsWith('{'))
        return reject(new Error(`probe of ${path} exited with ${code}\n${err.slice(-4000)}`));
      resolve(JSON.parse(line) as ProbeResult);
    });
  });
}

/** Probes the files one after another and prints a row each. */
export async function extractMemorySection(files: string[]): Promise<ProbeResult[]> {
  log('\n## Memory of one extract invocation (fresh Node process per file, --expose-gc, sampled every 5 ms)');
  const probes: ProbeResult[] = [];
  for (const path of files) probes.push(await runProbe(path));
  log(
    '\n| file | MB | parse s | peak heap+AB growth | peak heap growth | peak AB growth | retained after GC | abs. peak heap+AB | peak RSS growth | max sample gap |' +
      '\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const p of probes) {
    const base = p.baseline;
    log(
      `| ${p.file.split('/').at(-1)} | ${fixed(p.bytes / MB, 2)} | ${fixed(p.ms.parse / 1000, 2)} | ` +
        `${mib(p.peak.heapPlusArrayBuffers - base.heapUsed - base.arrayBuffers)} MiB | ${mib(p.peak.heapUsed - base.heapUsed)} MiB | ` +
        `${mib(p.peak.arrayBuffers - base.arrayBuffers)} MiB | ${mib(p.retained.heapUsed + p.retained.arrayBuffers - base.heapUsed - base.arrayBuffers)} MiB | ` +
        `${mib(p.peak.heapPlusArrayBuffers)} MiB | ${mib((p.peakRssKernel ?? p.peak.rss) - base.rss)} MiB | ${fixed(p.maxSampleGapMs, 0)} ms |`,
    );
    log(
      `    ${p.blocks} blocks, ${p.textChunks} text chunks, ${p.images} images (${mib(p.pngBytes)} MiB of PNG), ` +
        `baseline heap ${mib(base.heapUsed)} MiB + AB ${mib(base.arrayBuffers)} MiB, ${p.samples} samples`,
    );
  }
  return probes;
}
