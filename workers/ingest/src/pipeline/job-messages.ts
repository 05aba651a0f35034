import { describeCause } from '#core/adapters/upstream-error.ts';
import type { Attempt } from '#core/qstash/worker-shell.ts';
import { FetchFailed, type FetchFailure, FetchRefused } from '../guarded-fetch.ts';
import { ParseError } from '../parsers/types.ts';

/**
 * What a job's `error_message` may say when something other than the document itself went
 * wrong. Fixed, plain sentences: what failed underneath (a DNS transport error, a library's
 * exception, an upstream's reply) goes to the log, never to the user.
 */
export const JOB_MESSAGES = {
  deleted: 'The document was deleted before it was processed',
  workerFailed: 'The document could not be processed: the worker failed repeatedly',
} as const;

/** A fetch that did not deliver a page, in words for the user; a status code is ours to show. */
const FETCH_MESSAGES: Record<FetchFailure, (error: FetchFailed) => string> = {
  dns_failed: (error) =>
    error.transient
      ? 'The web address’s host name could not be looked up; try again later'
      : 'The web address’s host name could not be looked up: its DNS records are broken',
  timeout: () => 'The web page did not respond in time',
  unreachable: () => 'The web page could not be reached',
  http_status: (error) => `The URL could not be reached (HTTP ${error.status})`,
};

/** What a failed step means for its job: end it now with a plain message, or throw for QStash to retry. */
export type StepFailure = { retry: true } | { retry: false; message: string };

/**
 * Sorts a step's failure. The document's own fault (ParseError: its messages are ours) and
 * our URL policy's refusals end the job at once. A DNS outage and anything unexpected (an
 * upstream down, a crash) are retried, and only the final attempt ends the job, with a
 * fixed message; a definite DNS answer (no such host, a private address) is a refusal.
 */
export function sortFailure(error: unknown, attempt: Attempt): StepFailure {
  if (error instanceof ParseError || error instanceof FetchRefused) return { retry: false, message: error.message };
  if (error instanceof FetchFailed) {
    if (error.transient && !attempt.final) return { retry: true };
    return { retry: false, message: FETCH_MESSAGES[error.reason](error) };
  }
  return attempt.final ? { retry: false, message: JOB_MESSAGES.workerFailed } : { retry: true };
}

/**
 * The message a job ends with if this retried failure's attempt turns out to be the last: the step
 * names it in its answer, and QStash's failure callback hands it back.
 */
export function messageIfLast(error: unknown): string {
  const failure = sortFailure(error, { retried: 0, final: true });
  return failure.retry ? JOB_MESSAGES.workerFailed : failure.message;
}

/** Longer than any message of ours; a list of lost parts past it is cut, not stored whole. */
const MAX_MESSAGE_CHARS = 2000;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what this removes
const CONTROLS = /[\u0000-\u001f\u007f]+/g;

/**
 * The one gate every `error_message` passes. Our sentences may quote a document (a sheet's or a
 * ZIP entry's name): its control characters would garble the message, and a NUL would make
 * Postgres refuse the write and leave the job unfinished.
 */
export function storableMessage(message: string): string {
  const clean = message.replace(CONTROLS, ' ').trim();
  return clean.length > MAX_MESSAGE_CHARS ? `${clean.slice(0, MAX_MESSAGE_CHARS - 1)}…` : clean;
}

/** The log line that keeps what the job's message leaves out. */
export function failureDetail(error: unknown): string {
  const cause = error instanceof Error && error.cause !== undefined ? ` (cause: ${describeCause(error.cause)})` : '';
  return `${error instanceof Error ? error.name : 'Error'}: ${describeCause(error)}${cause}`;
}
