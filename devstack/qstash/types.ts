import type { FlowControl } from './flow-control.ts';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** How to call an Upstash-Callback or Upstash-Failure-Callback, from its own prefixed headers. */
export interface CallbackSpec {
  url: string;
  method: HttpMethod;
  /** Upstash-(Failure-)Callback-Forward-*, sent without the prefix. */
  headers: Record<string, string>;
  /** Unset: the source message's retries, as QStash does. */
  retries?: number;
  timeoutMs?: number;
  delayMs?: number;
}

/** A message QStash still owes a delivery: waiting, retrying or in flight. Plain JSON, so it persists as is. */
export interface StoredMessage {
  messageId: string;
  url: string;
  method: HttpMethod;
  /** What the destination receives besides QStash's own headers: Content-Type and the forwarded ones. */
  headers: Record<string, string>;
  /** Base64, since bodies may be binary. */
  body: string;
  maxRetries: number;
  /** Failed attempts so far; also the Upstash-Retried header of the next one. */
  retried: number;
  createdAt: number;
  /** Earliest time of the next attempt (ms); for a delayed message, the time it was asked for. */
  notBefore: number;
  timeoutMs?: number;
  retryDelay?: string;
  callback?: CallbackSpec;
  failureCallback?: CallbackSpec;
  label?: string;
  /** Upstash-Flow-Control-Key and -Value: the key's lane holds it while the key is at its limits. */
  flowControl?: FlowControl;
  callerIp?: string;
  /** Set on messages QStash sends about another one; they get no callbacks of their own. */
  origin?: 'callback' | 'failure-callback';
}

export interface DeliveryResponse {
  status: number;
  headers: Record<string, string[]>;
  /** Base64. */
  body: string;
}

export interface DlqEntry {
  dlqId: string;
  /** Orders the DLQ and makes list cursors stable under deletes. */
  seq: number;
  message: StoredMessage;
  failedAt: number;
  /** The last attempt's response; absent when it never got one (refused, timed out). */
  response?: DeliveryResponse;
  error?: string;
}

export interface DedupRecord {
  key: string;
  messageId: string;
  expiresAt: number;
}
