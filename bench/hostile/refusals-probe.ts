/** One case of bench/hostile/refusals.ts in a fresh process: prints one JSON line. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const [kase, root, mbText] = process.argv.slice(2) as [string, string, string];
const bytes = Number(mbText) * 1024 * 1024;
const PIECE = 64 * 1024;

function peakRssMiB(): number {
  const status = readFileSync('/proc/self/status', 'utf8');
  return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/** A body that counts what the reader pulled: `head`, then `size` filler bytes, then `tail`. */
function countedBody(head: Uint8Array, size: number, tail: Uint8Array) {
  let pulled = 0;
  let sent = -1;
  const filler = new Uint8Array(PIECE).fill(0x61);
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      let chunk: Uint8Array;
      if (sent < 0) chunk = head;
      else if (sent < size) chunk = filler.subarray(0, Math.min(PIECE, size - sent));
      else if (sent === size) chunk = tail;
      else return controller.close();
      sent = sent < 0 ? 0 : sent + (sent < size ? chunk.length : 1);
      pulled += chunk.length;
      controller.enqueue(chunk);
    },
  });
  return { stream, pulled: () => pulled };
}

const encoder = new TextEncoder();
// Modules load before the baseline: only the request's own cost is counted.
const { openFilePart } = await import(join(root, 'src/api/uploads/multipart.ts'));
const { createQStashWorker } = await import(join(root, 'src/core/qstash/worker-shell.ts'));
const { z } = await import('zod');
const baseline = peakRssMiB();
const cpuStart = process.cpuUsage();
let answer = '';
let pulled = () => 0;

if (kase === 'field-before-file') {
  const boundary = 'bench-boundary';
  const head = encoder.encode(`--${boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\n`);
  const tail = encoder.encode(
    `\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--${boundary}--\r\n`,
  );
  const body = countedBody(head, bytes, tail);
  pulled = body.pulled;
  const request = new Request('http://bench/ingest/', {
    method: 'POST',
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    body: body.stream,
    duplex: 'half',
  } as RequestInit);
  try {
    const file = await openFilePart(request);
    const reader = file.body.getReader();
    while (!(await reader.read()).done) {}
    answer = 'read the file';
  } catch (error) {
    answer = `refused: ${(error as Error).message.slice(0, 60)}`;
  }
} else {
  const app = createQStashWorker({
    loadConfig: () => ({ HYPERDRIVE: { connectionString: 'postgres://unused' } }),
    signing: () => ({ workerUrl: 'http://bench', currentSigningKey: 'sig_a', nextSigningKey: 'sig_b' }),
    deps: () => ({}),
    routes: { '/steps': { message: z.object({}), refusal: 'no', retries: 3, handle: async () => ({}) } },
    failures: { path: '/failures', message: z.object({}), refusal: 'no', handle: async () => ({}) },
    retryDetail: 'retry',
    logLabel: 'bench',
  });
  const body = countedBody(encoder.encode('{"x":"'), bytes, encoder.encode('"}'));
  pulled = body.pulled;
  const response = await app.fetch(
    new Request('http://bench/steps', { method: 'POST', body: body.stream, duplex: 'half' } as RequestInit),
    {},
    { waitUntil() {}, passThroughOnException() {} },
  );
  answer = `${response.status}`;
}

const cpu = process.cpuUsage(cpuStart);
console.log(
  JSON.stringify({
    cpuMs: (cpu.user + cpu.system) / 1000,
    peakMiB: Math.max(0, peakRssMiB() - baseline),
    readMiB: pulled() / 1024 / 1024,
    answer,
  }),
);
