import { createHash } from 'node:crypto';
import { dropUndefined } from './drop-undefined.ts';
import { parseDuration } from './durations.ts';
import { badRequest } from './errors.ts';
import { parseFlowControl } from './flow-control.ts';
import { canonicalHeaderName } from './headers.ts';
import { newMessageId } from './ids.ts';
import { compileRetryDelay } from './retry-delay.ts';
import { type CallbackSpec, HTTP_METHODS, type HttpMethod, type StoredMessage } from './types.ts';

export const DEFAULT_RETRIES = 3;

export interface PublishInput {
  /** The path after /v2/publish/ (or a batch entry's destination), with any query string. */
  destination: string;
  headers: Headers;
  body: Uint8Array;
  callerIp?: string;
  now: number;
}

export interface ParsedPublish {
  message: StoredMessage;
  deduplicationKey?: string;
}

/** Turns a publish request into the message to keep, or throws a 400 naming the bad header. */
export function parsePublish(input: PublishInput): ParsedPublish {
  const { headers, now } = input;
  const url = parseDestination(input.destination);
  const forwarded = forwardedHeaders(headers, 'upstash-forward-');
  const contentType = headers.get('content-type');
  const messageHeaders = contentType ? { 'Content-Type': contentType, ...forwarded } : forwarded;

  const retryDelay = headers.get('upstash-retry-delay') ?? undefined;
  if (retryDelay !== undefined) {
    try {
      compileRetryDelay(retryDelay);
    } catch (error) {
      throw badRequest((error as Error).message);
    }
  }

  const message: StoredMessage = {
    messageId: newMessageId(),
    url,
    method: parseMethod(headers, 'upstash-method') ?? 'POST',
    headers: messageHeaders,
    body: Buffer.from(input.body).toString('base64'),
    maxRetries: parseCount(headers, 'upstash-retries') ?? DEFAULT_RETRIES,
    retried: 0,
    createdAt: now,
    notBefore: parseNotBefore(headers, now),
    timeoutMs: parseTimeout(headers, 'upstash-timeout'),
    retryDelay,
    callback: parseCallback(headers, 'upstash-callback'),
    failureCallback: parseCallback(headers, 'upstash-failure-callback'),
    label: headers.get('upstash-label') ?? undefined,
    flowControl: parseFlowControl(headers),
    callerIp: input.callerIp,
  };
  return { message: dropUndefined(message), deduplicationKey: deduplicationKey(headers, message) };
}

export function parseDestination(raw: string): string {
  let text = raw;
  // Some clients encode the whole URL into the path segment.
  if (/^https?%3A/i.test(text)) {
    try {
      text = decodeURIComponent(text);
    } catch {
      throw badRequest(`invalid destination url: ${raw}`);
    }
  }
  if (!text) throw badRequest('destination is missing: publish to /v2/publish/<url>');
  return parseHttpUrl(text, 'destination');
}

function parseHttpUrl(text: string, what: string): string {
  if (!/^https?:\/\//i.test(text)) {
    throw badRequest(`invalid ${what} url: ${text} (the devstack delivers to http(s) URLs only, not URL groups or APIs)`);
  }
  try {
    new URL(text);
  } catch {
    throw badRequest(`invalid ${what} url: ${text}`);
  }
  return text;
}

function forwardedHeaders(headers: Headers, prefix: string): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (name.startsWith(prefix) && name.length > prefix.length) out[canonicalHeaderName(name.slice(prefix.length))] = value;
  });
  return out;
}

function parseMethod(headers: Headers, name: string): HttpMethod | undefined {
  const value = headers.get(name);
  if (value === null) return undefined;
  const method = value.trim().toUpperCase();
  if (!(HTTP_METHODS as readonly string[]).includes(method)) {
    throw badRequest(`invalid ${canonicalHeaderName(name)}: ${value} (one of ${HTTP_METHODS.join(', ')})`);
  }
  return method as HttpMethod;
}

function parseCount(headers: Headers, name: string): number | undefined {
  const value = headers.get(name);
  if (value === null) return undefined;
  if (!/^\d+$/.test(value.trim())) throw badRequest(`invalid ${canonicalHeaderName(name)}: ${value} (a whole number >= 0)`);
  return Number(value.trim());
}

function parseDelay(headers: Headers, name: string): number | undefined {
  const value = headers.get(name);
  if (value === null) return undefined;
  const ms = parseDuration(value);
  if (ms === undefined) throw badRequest(`invalid ${canonicalHeaderName(name)}: ${value} (like 10s, 5m, 2h, 1d)`);
  return ms;
}

function parseTimeout(headers: Headers, name: string): number | undefined {
  const ms = parseDelay(headers, name);
  if (ms === 0) throw badRequest(`invalid ${canonicalHeaderName(name)}: must be more than 0`);
  return ms;
}

function parseNotBefore(headers: Headers, now: number): number {
  // QStash: when both are given, Upstash-Not-Before wins.
  const notBefore = headers.get('upstash-not-before');
  if (notBefore !== null) {
    if (!/^\d+$/.test(notBefore.trim())) {
      throw badRequest(`invalid Upstash-Not-Before: ${notBefore} (a unix timestamp in seconds)`);
    }
    return Number(notBefore.trim()) * 1000;
  }
  return now + (parseDelay(headers, 'upstash-delay') ?? 0);
}

function parseCallback(headers: Headers, prefix: string): CallbackSpec | undefined {
  const url = headers.get(prefix);
  if (url === null) return undefined;
  const what = canonicalHeaderName(prefix);
  return dropUndefined({
    url: parseHttpUrl(url.trim(), what),
    method: parseMethod(headers, `${prefix}-method`) ?? 'POST',
    headers: forwardedHeaders(headers, `${prefix}-forward-`),
    retries: parseCount(headers, `${prefix}-retries`),
    timeoutMs: parseTimeout(headers, `${prefix}-timeout`),
    delayMs: parseDelay(headers, `${prefix}-delay`),
  });
}

function deduplicationKey(headers: Headers, message: StoredMessage): string | undefined {
  const id = headers.get('upstash-deduplication-id');
  if (id !== null && id !== '') return `id:${id}`;
  if (headers.get('upstash-content-based-deduplication')?.trim().toLowerCase() !== 'true') return undefined;
  // QStash's content key: destination, body, and the headers the destination will see.
  const sortedHeaders = Object.entries(message.headers).sort(([a], [b]) => a.localeCompare(b));
  const digest = createHash('sha256')
    .update(JSON.stringify([message.url, sortedHeaders, message.body]))
    .digest('hex');
  return `content:${digest}`;
}
