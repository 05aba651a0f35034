/**
 * Reads a V8 .cpuprofile (bench/load/load.ts writes one per phase with --profile) and lists where the time
 * went: the functions with the most self time, and self time by package or devstack folder.
 *
 *   npx tsx bench/harness/cpu-profile.ts FILE.cpuprofile [--top 25]
 */
import { existsSync, readFileSync } from 'node:fs';

export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  /** Profiled wall time. */
  totalMs: number;
  /** Time the thread was running JavaScript or native code (not idle). */
  busyMs: number;
  functions: { name: string; selfMs: number; share: number }[];
  areas: { name: string; selfMs: number; share: number }[];
  /** Self time of each sample charged to the nearest caller that is a package or a folder of this repository. */
  owners: { name: string; selfMs: number; share: number }[];
}

/** Where a script belongs: its npm package, its folder of this repository, or Node's own. */
export function areaOf(url: string): string {
  if (!url) return '(native / V8)';
  const inModules = url.lastIndexOf('node_modules/');
  if (inModules !== -1) {
    const parts = url.slice(inModules + 'node_modules/'.length).split('/');
    return (parts[0] as string).startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] as string);
  }
  if (url.startsWith('node:')) return url;
  // PGlite's Postgres (and Tesseract, where OCR runs) are WebAssembly.
  if (url.startsWith('wasm://')) return 'wasm (PGlite)';
  // Folders of this repository: devstack/qstash, src/core/db, workers/ingest/src/pipeline.
  const repo = url.match(/\/((?:devstack|bench|src|workers|test)\/.*)$/);
  if (repo) {
    const parts = (repo[1] as string).split('/');
    const depth = parts[0] === 'workers' ? 4 : parts[0] === 'src' ? 3 : 2;
    return parts.slice(0, Math.min(depth, parts.length)).join('/');
  }
  return url;
}

const IDLE = new Set(['(idle)', '(program)']);

/** Node's own modules, the native and V8 frames: time spent there is charged to whoever called them. */
const isRuntime = (area: string) => area.startsWith('node:') || area === '(native / V8)' || area.startsWith('node-internal:');

/**
 * A worker's profile names one script, its bundle. esbuild heads each module in it with a comment
 * naming the module's path; this maps a line of the bundle to that path.
 */
function bundleModules(source: string): (line: number) => string | undefined {
  const starts: { line: number; path: string }[] = [];
  source.split('\n').forEach((text, line) => {
    const match = text.match(/^\/\/ ((?:node_modules|src|workers|\.\.)\/\S+\.(?:[cm]?js|ts))$/);
    if (match) starts.push({ line, path: match[1] as string });
  });
  return (line) => {
    let low = 0;
    let high = starts.length - 1;
    let found: string | undefined;
    while (low <= high) {
      const mid = (low + high) >> 1;
      const start = starts[mid] as { line: number; path: string };
      if (start.line <= line) {
        found = start.path;
        low = mid + 1;
      } else high = mid - 1;
    }
    return found;
  };
}

/**
 * What one sample stands for: the usual gap between samples taken back to back. workerd samples only
 * while the isolate runs, so a long gap before a sample is mostly idle (a paced model's next word).
 */
export function sampleTick(profile: Profile): number {
  const close = profile.timeDeltas.filter((delta) => delta > 0 && delta < 1000).sort((a, b) => a - b);
  return close[close.length >> 1] ?? 250;
}

export function summarizeProfile(profile: Profile, top = 25, bundle?: string): ProfileSummary {
  const moduleAt = bundle ? bundleModules(bundle) : undefined;
  // Frames of the bundle get their module's path as their URL.
  for (const node of profile.nodes) {
    const frame = node.callFrame;
    if (moduleAt && frame.url.endsWith('index.js') && !frame.url.includes('/')) {
      frame.url = `/${moduleAt(frame.lineNumber) ?? 'index.js'}`;
    }
  }
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const tick = sampleTick(profile);
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    self.set(id, (self.get(id) ?? 0) + Math.min(profile.timeDeltas[i] ?? 0, tick));
  });
  const ownerOf = (id: number): string => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = (byId.get(at) as ProfileNode).callFrame;
      if (frame.functionName === '(garbage collector)' || frame.functionName === '(program)') return frame.functionName;
      const area = areaOf(frame.url);
      if (!isRuntime(area) && frame.url) return area;
    }
    return '(runtime, no caller of ours)';
  };
  const owners = new Map<string, number>();
  const functions = new Map<string, number>();
  const areas = new Map<string, number>();
  let busy = 0;
  for (const [id, micros] of self) {
    const frame = (byId.get(id) as ProfileNode).callFrame;
    if (frame.functionName === '(idle)') continue;
    busy += micros;
    const file = frame.url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, '');
    const name = IDLE.has(frame.functionName)
      ? frame.functionName
      : `${frame.functionName || '(anonymous)'} ${file ? `${file}:${frame.lineNumber + 1}` : ''}`.trim();
    functions.set(name, (functions.get(name) ?? 0) + micros);
    const area = frame.functionName === '(garbage collector)' ? '(garbage collector)' : areaOf(frame.url);
    areas.set(area, (areas.get(area) ?? 0) + micros);
    const owner = ownerOf(id);
    owners.set(owner, (owners.get(owner) ?? 0) + micros);
  }
  const totalMs = (profile.endTime - profile.startTime) / 1000;
  const rank = (entries: Map<string, number>) =>
    [...entries]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, micros]) => ({ name, selfMs: micros / 1000, share: micros / 1000 / totalMs }));
  return { totalMs, busyMs: busy / 1000, functions: rank(functions), areas: rank(areas), owners: rank(owners) };
}

export function readProfile(file: string, top = 25): ProfileSummary {
  const bundle = existsSync(`${file}.source.js`) ? readFileSync(`${file}.source.js`, 'utf8') : undefined;
  return summarizeProfile(JSON.parse(readFileSync(file, 'utf8')) as Profile, top, bundle);
}

/** Markdown: busy share, then the top functions and areas by self time. */
export function formatProfile(title: string, summary: ProfileSummary, top = 15): string {
  const pct = (share: number) => `${(share * 100).toFixed(1)} %`;
  const lines = [
    `#### ${title}: main thread busy ${(summary.busyMs / 1000).toFixed(1)} s of ${(summary.totalMs / 1000).toFixed(1)} s (${pct(summary.busyMs / summary.totalMs)})`,
    '',
    '| self time (ms) | of wall | function |',
    '|---:|---:|---|',
    ...summary.functions.slice(0, top).map((f) => `| ${f.selfMs.toFixed(0)} | ${pct(f.share)} | \`${f.name}\` |`),
    '',
    '| time (ms) | of wall | package or folder, with the Node and native calls it made |',
    '|---:|---:|---|',
    ...summary.owners.slice(0, top).map((a) => `| ${a.selfMs.toFixed(0)} | ${pct(a.share)} | ${a.name} |`),
  ];
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, flag, count] = process.argv.slice(2);
  if (!file) {
    console.error('usage: npx tsx bench/harness/cpu-profile.ts FILE.cpuprofile [--top N]');
    process.exit(2);
  }
  const top = flag === '--top' ? Number(count) : 25;
  console.log(formatProfile(file, readProfile(file, top), top));
}
