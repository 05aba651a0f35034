/**
 * The upload half of bench/load/load.ts: small text files sent to `POST /ingest/` by many clients at once,
 * each timed until its answer carries a job id (acceptance), and every job followed to a terminal status
 * through the database, so that following them adds no requests to the API under test.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { callApi } from '../../devstack/harness/api-call.ts';
import { pool } from '../harness/pool.ts';
import { percentile } from '../harness/stats.ts';

export interface UploadTarget {
  apiUrl: string;
  databaseUrl: string;
  token: string;
  collectionId: string;
}

/** Clients that each send the next file once the last was accepted, or uploads started at a steady rate. */
export type Pace = { concurrency: number } | { perSecond: number };

export interface UploadResult {
  files: number;
  pace: Pace;
  /** Uploads answered without a job id. */
  errors: number;
  errorExamples: string[];
  acceptanceMs: { p50: number; p99: number; max: number };
  /** Jobs that ended succeeded, partial or failed, by status. */
  statuses: Record<string, number>;
  /** From the first upload's start until the last job was seen terminal. */
  wallS: number;
  docsPerS: number;
  /** Upload start → job seen terminal, per document. */
  endToEndMs: { p50: number; p99: number };
}

interface Upload {
  start: number;
  accepted: number | null;
  jobId: string | null;
  terminal: number | null;
  status: string | null;
  error: string | null;
}

const TERMINAL = ['succeeded', 'partial', 'failed'];
const POLL_MS = 100;

async function uploadOne(target: UploadTarget, file: { name: string; bytes: Uint8Array }, upload: Upload) {
  const form = new FormData();
  form.append('file', new Blob([file.bytes as Uint8Array<ArrayBuffer>], { type: 'text/plain' }), file.name);
  try {
    const { status, body } = await callApi(target.apiUrl, 'POST', `/ingest/?collection_id=${target.collectionId}`, {
      token: target.token,
      body: form,
      signal: AbortSignal.timeout(120_000),
    });
    if (status === 200 && body.job_id) {
      upload.accepted = performance.now();
      upload.jobId = body.job_id;
    } else {
      upload.error = `${status} ${JSON.stringify(body).slice(0, 200)}`;
    }
  } catch (error) {
    upload.error = error instanceof Error ? error.message : String(error);
  }
}

/**
 * Uploads `files` at the given pace: closed loop (`concurrency` clients, each sending its next file as
 * soon as the last was accepted) or open loop (one started every 1/`perSecond` s, whatever the answers
 * do), and waits (at most `timeoutMs`) until every accepted job is terminal.
 */
export async function runUploads(
  target: UploadTarget,
  files: { name: string; bytes: Uint8Array }[],
  pace: Pace,
  timeoutMs = 900_000,
): Promise<UploadResult> {
  const sql = postgres(target.databaseUrl, { max: 1, prepare: false, onnotice: () => {} });
  const uploads: Upload[] = [];
  let uploading = true;
  const started = performance.now();
  try {
    const follow = (async () => {
      const deadline = started + timeoutMs;
      for (;;) {
        const open = uploads.filter((u) => u.jobId && u.terminal === null);
        if (open.length > 0) {
          const rows = await sql<{ id: string; status: string }[]>`
            select id::text, status from ingest_jobs
             where id = any(${open.map((u) => u.jobId as string)}::uuid[]) and status = any(${TERMINAL})`;
          const seen = performance.now();
          const byId = new Map(rows.map((row) => [row.id, row.status]));
          for (const upload of open) {
            const status = byId.get(upload.jobId as string);
            if (status) Object.assign(upload, { terminal: seen, status });
          }
        }
        if (!uploading && uploads.every((u) => u.error || u.terminal !== null)) return;
        if (performance.now() > deadline) throw new Error(`jobs still open after ${timeoutMs / 1000} s`);
        await sleep(POLL_MS);
      }
    })();
    const send = async (file: { name: string; bytes: Uint8Array }) => {
      const upload: Upload = { start: performance.now(), accepted: null, jobId: null, terminal: null, status: null, error: null };
      uploads.push(upload);
      await uploadOne(target, file, upload);
    };
    const sending =
      'concurrency' in pace
        ? pool(files, pace.concurrency, send)
        : Promise.all(
            files.map(async (file, i) => {
              await sleep(Math.max(0, started + (i * 1000) / pace.perSecond - performance.now()));
              await send(file);
            }),
          );
    await sending.finally(() => {
      uploading = false;
    });
    await follow;
  } finally {
    await sql.end({ timeout: 1 });
  }

  const accepted = uploads.filter((u) => u.accepted !== null);
  const acceptance = accepted.map((u) => (u.accepted as number) - u.start);
  const done = uploads.filter((u) => u.terminal !== null);
  const lastTerminal = Math.max(...done.map((u) => u.terminal as number));
  const wallS = (lastTerminal - started) / 1000;
  const statuses: Record<string, number> = {};
  for (const u of done) statuses[u.status as string] = (statuses[u.status as string] ?? 0) + 1;
  const failed = uploads.filter((u) => u.error);
  return {
    files: files.length,
    pace,
    errors: failed.length,
    errorExamples: [...new Set(failed.map((u) => u.error as string))].slice(0, 3),
    acceptanceMs: { p50: percentile(acceptance, 50), p99: percentile(acceptance, 99), max: Math.max(...acceptance) },
    statuses,
    wallS,
    docsPerS: done.length / wallS,
    endToEndMs: {
      p50: percentile(
        done.map((u) => (u.terminal as number) - u.start),
        50,
      ),
      p99: percentile(
        done.map((u) => (u.terminal as number) - u.start),
        99,
      ),
    },
  };
}
