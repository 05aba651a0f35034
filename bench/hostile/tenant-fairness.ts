/**
 * Fairness between tenants: user A uploads the hostile set of the first review at once (workbooks of
 * thousands of chunks of one text, an 8 MB paragraph of one sentence, a 20,000-page PDF, and the
 * rest), and a moment later user B uploads one small document. Measured: B's time from upload to
 * `succeeded`, and to being found by POST /query/search, and how many of A's jobs were still running
 * then; A's own time to finish, and how many texts the ingest worker sent to the embedding model.
 *
 *   npx tsx bench/hostile/tenant-fairness.ts [--root <checkout>] [--parallelism 4] [--delay 2] [--wait-a 900] [--out file.json]
 *
 * A deployment like `npm run dev` (devstack/local/deployment.ts of `--root`, default this checkout) on free
 * ports, in memory. `--root` runs another checkout's workers and devstack on the same files:
 * `git archive <commit> | tar -x -C DIR` and a symlink to node_modules give the code before a change.
 * `--parallelism` is INGEST_PARALLELISM_PER_USER (0: flow control off; a checkout without it ignores it).
 */
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { callApi, fileForm } from '../../devstack/harness/api-call.ts';
import { signUpUser } from '../../devstack/harness/auth-client.ts';
import { HOSTILE_FILES } from '../../devstack/harness/hostile-files.ts';
import type * as DeploymentModule from '../../devstack/local/deployment.ts';
import { readFlags, text, whole } from '../harness/flags.ts';
import { fixed, log } from '../harness/format.ts';
import { load, machine } from '../harness/machine.ts';

/** The hostile set as the first review had it (devstack/harness/hostile-files.ts has grown since). */
const FIRST_REVIEW = [
  'xlsx-shared-string',
  'xlsx-header-repeat',
  'xlsx-last-column',
  'xlsx-merges',
  'md-heading',
  'md-table-delimiter',
  'md-bold',
  'md-links',
  'txt-dots',
  'docx-deep-nesting',
  'docx-attribute-run',
  'docx-million-runs',
  'docx-big-images',
  'html-nested-11k',
  'html-nested-55k',
  'html-unclosed-tags',
  'html-200k-paragraphs',
  'csv-header-repeat',
  'csv-commas',
  'txt-one-paragraph',
  'pdf-flate-bomb',
  'pdf-20000-pages',
];
const TERMINAL = ['succeeded', 'partial', 'failed'];
const POLL_MS = 200;

const flags = readFlags({
  root: text(new URL('../..', import.meta.url).pathname),
  parallelism: whole('4'),
  delay: whole('2'),
  'wait-a': whole('900'),
  out: text(),
});
const root = resolve(flags.root);

/** Counts the texts the ingest worker sends to /v1/embeddings on their way to the devstack's model server. */
async function startEmbeddingCounter(target: string) {
  const upstream = new URL(target);
  const counted = { requests: 0, inputs: 0 };
  const server = createServer((req: IncomingMessage, res) => {
    const body: Buffer[] = [];
    req.on('data', (chunk: Buffer) => body.push(chunk));
    req.on('end', () => {
      const payload = Buffer.concat(body);
      if (req.method === 'POST' && req.url?.endsWith('/embeddings')) {
        const input = (JSON.parse(payload.toString('utf8')) as { input: unknown }).input;
        counted.requests++;
        counted.inputs += Array.isArray(input) ? input.length : 1;
      }
      const forward = request(
        { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on('error', () => res.destroy());
      forward.end(payload);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  const base = new URL(target);
  base.host = `127.0.0.1:${port}`;
  return {
    baseUrl: base.toString().replace(/\/$/, ''),
    counted,
    stop: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}

/** POST /ingest/; a connection that breaks before the answer (the local proxy under load) is tried again, twice. */
async function uploadFile(apiUrl: string, token: string, name: string, bytes: Uint8Array) {
  for (let attempt = 1; ; attempt++) {
    try {
      const { status, body } = await callApi(apiUrl, 'POST', '/ingest/', {
        token,
        body: fileForm(name, bytes),
        signal: AbortSignal.timeout(300_000),
      });
      return { status, jobId: body.job_id, code: body.code, attempts: attempt };
    } catch (error) {
      if (attempt === 3) return { status: 0, jobId: undefined, code: String(error), attempts: attempt };
      await sleep(1000);
    }
  }
}

async function jobStatuses(sql: postgres.Sql, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await sql<{ id: string; status: string }[]>`select id, status from ingest_jobs where id = any(${ids}::uuid[])`;
  return new Map(rows.map((row) => [row.id, row.status]));
}

async function untilTerminal(sql: postgres.Sql, id: string, deadline: number): Promise<string> {
  for (;;) {
    const status = (await jobStatuses(sql, [id])).get(id) ?? 'missing';
    if (TERMINAL.includes(status) || Date.now() > deadline) return status;
    await sleep(POLL_MS);
  }
}

/** Until B's document is among the sources POST /query/search finds for its phrase; ms, or null at the deadline. */
async function untilFound(apiUrl: string, token: string, phrase: string, name: string, deadline: number) {
  for (;;) {
    const { status, body } = await callApi(apiUrl, 'POST', '/query/search', { token, body: { question: phrase, top_k: 5 } });
    if (status === 200 && body.sources.some((source) => source.source === name)) return true;
    if (Date.now() > deadline) return false;
    await sleep(POLL_MS);
  }
}

async function main() {
  // Other work on the machine, before this run adds its own.
  const loadAtStart = load();
  const { startLocalDeployment, UNLIMITED_RATES } = (await import(
    join(root, 'devstack/local/deployment.ts')
  )) as typeof DeploymentModule;
  let counter: Awaited<ReturnType<typeof startEmbeddingCounter>> | undefined;
  const deployment = await startLocalDeployment({
    quiet: true,
    vars: {
      ...UNLIMITED_RATES,
      // The set makes more chunks than the default daily quota allows one user; the quota is not what is measured.
      INGEST_DAILY_CHUNKS_PER_USER: '10000000',
      INGEST_PARALLELISM_PER_USER: String(flags.parallelism),
    },
    beforeWorkers: async (stack) => {
      counter = await startEmbeddingCounter(stack.openaiBaseUrl);
      return { vars: { ingest: { EMBEDDING_BASE_URL: counter.baseUrl } }, stop: () => counter?.stop() ?? Promise.resolve() };
    },
  });
  const { stack } = deployment;
  const sql = postgres(stack.databaseUrl, { max: 2, prepare: false, onnotice: () => {} });
  try {
    const auth = { supabaseUrl: stack.supabaseUrl, anonKey: stack.keys.anonKey };
    const apiUrl = deployment.api.url;
    const [a, b, warm] = await Promise.all(
      ['a', 'b', 'warm'].map((who) => signUpUser(auth, `fairness-${who}-${crypto.randomUUID().slice(0, 8)}@example.com`)),
    );
    // Every worker, the model and the index warmed once, so that neither run pays a cold start in B's time.
    const warmUp = await uploadFile(apiUrl, warm!.token, 'warm.txt', new TextEncoder().encode('Warm-up text about lighthouses.'));
    await untilTerminal(sql, warmUp.jobId as string, Date.now() + 120_000);
    await untilFound(apiUrl, warm!.token, 'lighthouses', 'warm.txt', Date.now() + 60_000);

    const files = FIRST_REVIEW.map((name) => {
      const file = HOSTILE_FILES.find((hostile) => hostile.name === name);
      if (!file) throw new Error(`no hostile file ${name}`);
      return { name: `${file.name}.${file.type}`, bytes: file.bytes() };
    });
    const embeddedBefore = { ...counter!.counted };
    const started = performance.now();
    const uploads = await Promise.all(files.map((file) => uploadFile(apiUrl, a!.token, file.name, file.bytes)));
    const aAccepted = performance.now() - started;
    const aJobs = uploads.flatMap((upload) => (upload.jobId ? [upload.jobId] : []));
    const fileOf = new Map(uploads.flatMap((upload, i) => (upload.jobId ? [[upload.jobId, files[i]?.name ?? '']] : [])));
    log(`A: ${aJobs.length} of ${files.length} uploads accepted in ${fixed(aAccepted / 1000)} s`);
    for (const [i, upload] of uploads.entries()) {
      if (!upload.jobId || upload.attempts > 1)
        log(`  ${files[i]?.name}: ${upload.status} ${upload.code ?? ''} (${upload.attempts} attempts)`);
    }

    await sleep(flags.delay * 1000);
    const phrase = `Osric Penhallow kept the Marrow Island light ${crypto.randomUUID().slice(0, 6)}`;
    const bName = 'keeper.txt';
    const bStart = performance.now();
    const bUpload = await uploadFile(apiUrl, b!.token, bName, new TextEncoder().encode(`${phrase} for thirty-one years.`));
    const bAcceptedMs = performance.now() - bStart;
    const deadline = Date.now() + 600_000;
    const bStatus = await untilTerminal(sql, bUpload.jobId as string, deadline);
    const bTerminalMs = performance.now() - bStart;
    const found = bStatus === 'succeeded' && (await untilFound(apiUrl, b!.token, phrase, bName, deadline));
    const bFoundMs = performance.now() - bStart;
    const aWhenB = await jobStatuses(sql, aJobs);
    const aRunningWhenB = [...aWhenB.values()].filter((status) => !TERMINAL.includes(status)).length;
    log(
      `B: accepted in ${fixed(bAcceptedMs / 1000, 2)} s, ${bStatus} after ${fixed(bTerminalMs / 1000)} s, found by search after ${found ? `${fixed(bFoundMs / 1000)} s` : 'never'}`,
    );
    log(`A: ${aRunningWhenB} of ${aJobs.length} jobs still running when B was found`);

    // A's own time: until its last job ends, or --wait-a.
    const aDeadline = Date.now() + flags['wait-a'] * 1000;
    let aStatuses = aWhenB;
    /** Seconds from A's uploads until each of its jobs was seen ended (to within a second). */
    const endedS: Record<string, number> = {};
    while (Date.now() < aDeadline) {
      aStatuses = await jobStatuses(sql, aJobs);
      for (const [id, status] of aStatuses) {
        const name = fileOf.get(id) ?? id;
        if (TERMINAL.includes(status) && endedS[name] === undefined) endedS[name] = (performance.now() - started) / 1000;
      }
      if ([...aStatuses.values()].every((status) => TERMINAL.includes(status))) break;
      await sleep(1000);
    }
    const aDone = [...aStatuses.values()].every((status) => TERMINAL.includes(status));
    const aMs = performance.now() - started;
    const embedded = {
      requests: counter!.counted.requests - embeddedBefore.requests,
      inputs: counter!.counted.inputs - embeddedBefore.inputs,
    };
    const byStatus: Record<string, number> = {};
    for (const status of aStatuses.values()) byStatus[status] = (byStatus[status] ?? 0) + 1;
    const unfinished = [...aStatuses].filter(([, status]) => !TERMINAL.includes(status)).map(([id]) => fileOf.get(id));
    const endings = await sql<{ id: string; status: string; error_message: string | null }[]>`
      select id, status, error_message from ingest_jobs where id = any(${aJobs}::uuid[])`;
    const jobs = Object.fromEntries(endings.map((job) => [fileOf.get(job.id), `${job.status}: ${job.error_message ?? ''}`]));
    log(
      `A: ${aDone ? 'all ended' : 'still running'} after ${fixed(aMs / 1000)} s (${JSON.stringify(byStatus)}); ` +
        `${embedded.inputs} texts embedded in ${embedded.requests} requests`,
    );
    if (unfinished.length > 0) log(`A: not ended: ${unfinished.join(', ')}`);

    const result = {
      root,
      parallelism: flags.parallelism,
      machine: machine(),
      load: { atStart: loadAtStart, atEnd: load() },
      a: {
        files: files.length,
        accepted: aJobs.length,
        acceptedS: aAccepted / 1000,
        runningWhenB: aRunningWhenB,
        done: aDone,
        seconds: aMs / 1000,
        statuses: byStatus,
        unfinished,
        jobs,
        endedS,
        embedded,
      },
      b: {
        acceptedS: bAcceptedMs / 1000,
        status: bStatus,
        terminalS: bTerminalMs / 1000,
        found,
        foundS: found ? bFoundMs / 1000 : null,
      },
    };
    if (flags.out) writeFileSync(flags.out, `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await sql.end();
    await deployment.stop();
  }
}

await main();
