import type { getResolvedPDFJS } from 'unpdf';
import { logUnowned } from '#core/log.ts';

export type Pdfjs = Awaited<ReturnType<typeof getResolvedPDFJS>>;
export type Matrix = [number, number, number, number, number, number];

export function multiply(m: Matrix, n: Matrix): Matrix {
  return [
    m[0] * n[0] + m[2] * n[1],
    m[1] * n[0] + m[3] * n[1],
    m[0] * n[2] + m[2] * n[3],
    m[1] * n[2] + m[3] * n[3],
    m[0] * n[4] + m[2] * n[5] + m[4],
    m[1] * n[4] + m[3] * n[5] + m[5],
  ];
}

export class TimeoutError extends Error {
  override name = 'TimeoutError';
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`${what} took longer than ${Math.round(ms / 1000)} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => {
    if (timer !== undefined) clearTimeout(timer);
  });
}

/**
 * Why a page (or its images) could not be read, in words for the job's message: a timeout is
 * ours to explain, while pdf.js's own exception text goes to the log only.
 */
export function pageFailure(error: unknown, what: string): string {
  if (error instanceof TimeoutError) return 'reading it took too long';
  logUnowned('warn', 'pdf_part_failed', { worker: 'ingest', what, cause: messageOf(error).slice(0, 300) });
  return 'it is damaged or uses a feature that is not supported';
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function plural(n: number): string {
  return n === 1 ? '' : 's';
}
