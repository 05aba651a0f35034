/**
 * The memory of reading one large fetched page, in a fresh Node process: a body of `--mb` MB
 * streamed in pieces of 1 MB, its length declared (or not, with `--chunked`; or declared as a
 * quarter of it under `content-encoding: gzip`, with `--gzip`, as fetch hands over a decoded
 * body), read by the ingest worker's guarded fetch. Garbage is collected before each piece is sent, so the peak is
 * what reading the body holds at once, not what it already let go of.
 *
 *   node --expose-gc --import tsx bench/hostile/url-probe.ts --mb 48 [--chunked | --gzip]
 *
 * Prints one JSON line: the body's size, what was read, and the kernel's peak resident set over
 * the reading (VmHWM after a reset), above what the process held before it began.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { guardedFetch } from '../../workers/ingest/src/guarded-fetch.ts';
import { fail, readFlags, toggle, whole } from '../harness/flags.ts';

const PIECE = 1024 * 1024;

export interface UrlProbeResult {
  bodyBytes: number;
  readBytes: number;
  peakBytes: number;
}

function status(field: string): number {
  const match = readFileSync('/proc/self/status', 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
  return match ? Number(match[1]) * 1024 : 0;
}

async function main() {
  const { mb, chunked, gzip } = readFlags({ mb: whole('48', 1, 50), chunked: toggle(), gzip: toggle() });
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) fail('run with --expose-gc');
  const size = mb * PIECE;
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      // What the reader let go of is gone before the next piece arrives, as under memory pressure.
      gc();
      if (sent >= size) return controller.close();
      // A fresh piece each time, as the network hands them over; filled, so its pages are really used.
      controller.enqueue(new Uint8Array(PIECE).fill(0x61 + ((sent / PIECE) % 26)));
      sent += PIECE;
    },
  });
  const headers: Record<string, string> = { 'content-type': 'text/plain' };
  if (gzip) {
    headers['content-encoding'] = 'gzip';
    headers['content-length'] = String(size / 4);
  } else if (!chunked) {
    headers['content-length'] = String(size);
  }
  gc();
  const before = status('VmRSS');
  writeFileSync('/proc/self/clear_refs', '5');
  const page = await guardedFetch('http://public.example.test/big.txt', {
    resolve: async () => ['93.184.216.34'],
    maxBytes: 50 * PIECE,
    fetchImpl: async () => new Response(body, { status: 200, headers }),
  });
  const result: UrlProbeResult = { bodyBytes: size, readBytes: page.bytes.byteLength, peakBytes: status('VmHWM') - before };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

await main();
