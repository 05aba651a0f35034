import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What a wrangler command printed, for the commands whose answer the deploy script reads. */
export interface WranglerOutput {
  status: number;
  stdout: string;
  stderr: string;
}

export interface Wrangler {
  /**
   * Output kept for reading (hyperdrive get, secret list). No terminal: wrangler asks nothing and fails
   * instead, which the caller reports (not logged in, no network).
   */
  read(args: string[]): Promise<WranglerOutput>;
  /**
   * The terminal passed straight through, so that first-run questions (a workers.dev subdomain, a login)
   * and progress are seen and answered. What the script needs back (the deployed URLs) comes from
   * wrangler's output file (WRANGLER_OUTPUT_FILE_PATH), one JSON entry a line.
   */
  run(args: string[], input?: string): Promise<{ status: number; entries: Record<string, unknown>[] }>;
}

export function localWrangler(root: string, env: NodeJS.ProcessEnv = process.env): Wrangler {
  const bin = join(root, 'node_modules/.bin/wrangler');
  return {
    read: (args) =>
      new Promise((resolve, reject) => {
        const child = spawn(bin, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
        });
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
        });
        child.once('error', reject);
        child.once('close', (status) => resolve({ status: status ?? 1, stdout, stderr }));
      }),
    run: (args, input) =>
      new Promise((resolve, reject) => {
        const dir = mkdtempSync(join(tmpdir(), 'rag-wrangler-'));
        const outputFile = join(dir, 'output.ndjson');
        const child = spawn(bin, args, {
          cwd: root,
          env: { ...env, WRANGLER_OUTPUT_FILE_PATH: outputFile },
          stdio: [input === undefined ? 'inherit' : 'pipe', 'inherit', 'inherit'],
        });
        if (input !== undefined) child.stdin?.end(input);
        child.once('error', (error) => {
          rmSync(dir, { recursive: true, force: true });
          reject(error);
        });
        child.once('close', (status) => {
          let entries: Record<string, unknown>[] = [];
          try {
            entries = readFileSync(outputFile, 'utf8')
              .split('\n')
              .filter(Boolean)
              .map((line) => JSON.parse(line) as Record<string, unknown>);
          } catch {
            // No output file: wrangler stopped before writing any.
          }
          rmSync(dir, { recursive: true, force: true });
          resolve({ status: status ?? 1, entries });
        });
      }),
  };
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal colour codes are what this removes
const COLOURS = /\u001b\[[0-9;]*m/g;

/** Why a read failed, from what wrangler printed: the cases the deploy script words differently. */
export function failureKind(output: WranglerOutput): 'login' | 'network' | 'not-found' | 'other' {
  const text = `${output.stdout}\n${output.stderr}`.replace(COLOURS, '');
  if (
    /not logged in|CLOUDFLARE_API_TOKEN|wrangler login|Authentication error|\[code: 10000\]|\[code: 9106\]|\[code: 9109\]/i.test(
      text,
    )
  ) {
    return 'login';
  }
  if (/fetch failed|ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNRESET|getaddrinfo|network/i.test(text)) return 'network';
  if (/not found|does not exist|\[code: 10007\]|\[code: 2008\]/i.test(text)) return 'not-found';
  return 'other';
}

/** wrangler's error in one line: its [ERROR] line and the API's reason under it, banner and logs left out. */
export function errorLine(output: WranglerOutput): string {
  const lines = `${output.stderr}\n${output.stdout}`
    .replace(COLOURS, '')
    .split('\n')
    .map((line) => line.trim());
  const at = lines.findIndex((line) => line.includes('[ERROR]'));
  if (at < 0) return (lines.find((line) => line.length > 0) ?? '').slice(0, 300);
  const reason = lines.slice(at + 1).find((line) => line.length > 0 && !line.startsWith('If you think'));
  const error = lines[at]?.replace(/^.*\[ERROR\]\s*/, '') ?? '';
  return (reason && /\[code: \d+\]/.test(reason) ? `${error} ${reason}` : error).slice(0, 300);
}
