/**
 * Structured logs: one JSON line per event on stdout, which Workers Logs (and `wrangler tail`) index
 * by field. A logger is made per request or per delivery with the fields it knows (the worker, the
 * request id, later the user, the job or the collection) and handed down; nothing here is global.
 *
 * What never goes in: secrets and document text. Callers log ids, counts and our own words; the
 * logger also blanks every secret value it was given (the worker's settings) and anything shaped
 * like a bearer token, a JWT or an API key, in case an upstream's error message carries one.
 */

export type WorkerName = 'api' | 'ingest' | 'scoring';

export type LogValue = string | number | boolean | null | undefined;
export type LogFields = Record<string, LogValue>;

export interface Logger {
  /** The id every line of this logger carries, and every QStash message published under it. */
  readonly requestId: string;
  /** The same logger with more fields on every line (a user, a job). */
  with(fields: LogFields): Logger;
  info(event: string, fields?: LogFields): void;
  warn(event: string, fields?: LogFields): void;
  /** An error's name, message (cut short) and code; its cause's too. Never its data. */
  error(event: string, error?: unknown, fields?: LogFields): void;
}

export interface LoggerOptions {
  /** Values to blank wherever they appear: the worker's keys and tokens (secretsOf). */
  secrets?: readonly string[];
  /** Where lines go; console.log by default (the tests pass their own). */
  write?: (line: string) => void;
}

const MAX_MESSAGE_CHARS = 300;
const REDACTED = '[redacted]';
// Bearer credentials, JWTs (three base64url parts, the first a JSON header), our API keys and webhook secrets.
const SHAPED_LIKE_SECRETS = [
  /\bBearer\s+[A-Za-z0-9\-_.=~+/]+/gi,
  /\beyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g,
  /\brag_[A-Za-z0-9_-]{16,}/g,
  /\bwhsec_[A-Za-z0-9_-]{8,}/g,
  /\bsb_secret_[A-Za-z0-9_-]{8,}/g,
];

/** A fresh id, for work no request started (a cron sweep, a message without one). */
export const newRequestId = (): string => crypto.randomUUID();

export function createLogger(base: { worker: WorkerName; request_id: string } & LogFields, options: LoggerOptions = {}): Logger {
  const secrets = (options.secrets ?? []).filter((value) => value.length >= 8);
  const write = options.write ?? ((line: string) => console.log(line));
  const emit = (level: 'info' | 'warn' | 'error', event: string, fields: LogFields | undefined, error?: unknown) => {
    const line: Record<string, unknown> = { time: new Date().toISOString(), level, event, ...base, ...fields };
    if (error !== undefined) line.error = describeError(error);
    write(redact(JSON.stringify(line), secrets));
  };
  return {
    requestId: base.request_id,
    with: (fields) => createLogger({ ...base, ...fields }, options),
    info: (event, fields) => emit('info', event, fields),
    warn: (event, fields) => emit('warn', event, fields),
    error: (event, error, fields) => emit('error', event, fields, error),
  };
}

/**
 * For an event no request owns (a per-isolate cache's refresh, the settings parsed once, a parser deep
 * in a step): the same line, without a request id. Keeps no state.
 */
export function logUnowned(level: 'info' | 'warn' | 'error', event: string, fields: LogFields = {}): void {
  console.log(redact(JSON.stringify({ time: new Date().toISOString(), level, event, ...fields }), []));
}

/** Every value of a setting whose name says it is a secret, and the database's connection string. */
export function secretsOf(settings: object): string[] {
  const values: string[] = [];
  for (const [name, value] of Object.entries(settings)) {
    if (typeof value === 'string' && /KEY|TOKEN|SECRET|PASSWORD/.test(name)) values.push(value);
    if (name === 'HYPERDRIVE' && typeof value === 'object' && value !== null) {
      const connection = (value as { connectionString?: unknown }).connectionString;
      if (typeof connection === 'string') values.push(connection);
    }
  }
  return values;
}

interface DescribedError {
  name: string;
  message: string;
  code?: string;
  cause?: DescribedError;
}

function describeError(error: unknown, depth = 0): DescribedError {
  if (!(error instanceof Error)) return { name: typeof error, message: String(error).slice(0, MAX_MESSAGE_CHARS) };
  const code = (error as { code?: unknown }).code;
  return {
    name: error.name,
    message: error.message.slice(0, MAX_MESSAGE_CHARS),
    ...(typeof code === 'string' || typeof code === 'number' ? { code: String(code) } : {}),
    ...(error.cause !== undefined && depth < 2 ? { cause: describeError(error.cause, depth + 1) } : {}),
  };
}

function redact(line: string, secrets: readonly string[]): string {
  let out = line;
  for (const secret of secrets) {
    // The value as JSON.stringify wrote it (quotes and backslashes escaped).
    const written = JSON.stringify(secret).slice(1, -1);
    if (out.includes(written)) out = out.split(written).join(REDACTED);
  }
  for (const pattern of SHAPED_LIKE_SECRETS) out = out.replace(pattern, REDACTED);
  return out;
}
