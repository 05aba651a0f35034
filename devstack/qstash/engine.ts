import { dropUndefined } from './drop-undefined.ts';
import { headerLists } from './headers.ts';
import { newMessageId } from './ids.ts';
import type { ParsedPublish } from './publish-request.ts';
import { compileRetryDelay } from './retry-delay.ts';
import { signDelivery } from './signature.ts';
import type { StateChange } from './state-file.ts';
import type { CallbackSpec, DedupRecord, DeliveryResponse, DlqEntry, StoredMessage } from './types.ts';
import { callbackPayload } from './wire.ts';

export interface EngineOptions {
  /** Read at each attempt, so a key rotation applies to the next delivery. */
  signingKey: () => string;
  backoffMs: (retry: number) => number;
  deliveryTimeoutMs: number;
  maxInFlight: number;
  deduplicationWindowMs: number;
  log: (line: string) => void;
  /** Called with every change of state worth persisting. */
  changed: (change: StateChange) => void;
  initial?: EngineState;
}

export interface EngineState {
  messages: StoredMessage[];
  dlq: DlqEntry[];
  dedup: DedupRecord[];
  dlqSeq: number;
}

export interface PublishResult {
  messageId: string;
  url: string;
  deduplicated?: true;
}

interface Flight {
  controller: AbortController;
  /** Cancelled by the API while in flight: no retry, no callbacks. */
  cancelled: boolean;
  /** Stopped with the server: the message stays pending as it was, to be delivered again. */
  halted: boolean;
  done: Promise<void>;
}

interface Outcome {
  response?: DeliveryResponse;
  error?: string;
}

// setTimeout's ceiling; longer waits re-arm.
const MAX_TIMER_MS = 2_147_483_647;

/**
 * QStash's delivery side: pending messages wait for their time, run at most
 * maxInFlight at once, retry with backoff, and end delivered or in the DLQ.
 * Delivery is at-least-once: a message leaves `pending` only once an attempt has
 * ended, so a stop mid-attempt keeps it for the next start.
 */
export class DeliveryEngine {
  private readonly pending = new Map<string, StoredMessage>();
  private readonly dlq = new Map<string, DlqEntry>();
  private readonly dedup = new Map<string, DedupRecord>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Due messages in arrival order; a Set so removal on cancel is cheap. */
  private readonly ready = new Set<string>();
  private readonly inFlight = new Map<string, Flight>();
  private idleWaiters: { resolve: () => void; reject: (error: Error) => void }[] = [];
  private dlqSeq: number;
  private halted = false;

  constructor(private readonly options: EngineOptions) {
    const initial = options.initial;
    this.dlqSeq = initial?.dlqSeq ?? 0;
    for (const entry of initial?.dlq ?? []) this.dlq.set(entry.dlqId, entry);
    const now = Date.now();
    for (const record of initial?.dedup ?? []) if (record.expiresAt > now) this.dedup.set(record.key, record);
    for (const message of initial?.messages ?? []) {
      this.pending.set(message.messageId, message);
      this.schedule(message);
    }
  }

  snapshot(): EngineState {
    return {
      messages: [...this.pending.values()],
      dlq: [...this.dlq.values()],
      dedup: [...this.dedup.values()],
      dlqSeq: this.dlqSeq,
    };
  }

  publish({ message, deduplicationKey }: ParsedPublish): PublishResult {
    const now = Date.now();
    this.expireDedup(now);
    if (deduplicationKey) {
      const seen = this.dedup.get(deduplicationKey);
      if (seen) return { messageId: seen.messageId, url: message.url, deduplicated: true };
      const record = { key: deduplicationKey, messageId: message.messageId, expiresAt: now + this.options.deduplicationWindowMs };
      this.dedup.set(deduplicationKey, record);
      this.options.changed({ dedup: record });
    }
    this.enqueue(message);
    return { messageId: message.messageId, url: message.url };
  }

  get(messageId: string): StoredMessage | undefined {
    return this.pending.get(messageId);
  }

  /** Stops further delivery. An attempt already under way finishes, but is neither retried nor reported. */
  cancel(messageId: string): boolean {
    if (!this.pending.delete(messageId)) return false;
    clearTimeout(this.timers.get(messageId));
    this.timers.delete(messageId);
    this.ready.delete(messageId);
    const flight = this.inFlight.get(messageId);
    if (flight) flight.cancelled = true;
    this.options.log(`qstash: ${messageId} cancelled`);
    this.options.changed({ drop: messageId });
    this.checkIdle();
    return true;
  }

  pendingMessages(): StoredMessage[] {
    return [...this.pending.values()];
  }

  dlqEntries(): DlqEntry[] {
    return [...this.dlq.values()];
  }

  dlqGet(dlqId: string): DlqEntry | undefined {
    return this.dlq.get(dlqId);
  }

  dlqDelete(dlqIds: string[]): number {
    let deleted = 0;
    for (const id of dlqIds) {
      if (!this.dlq.delete(id)) continue;
      deleted++;
      this.options.changed({ dlqDrop: id });
    }
    return deleted;
  }

  /** Publishes DLQ messages again as new messages, with their retries restored, and drops them from the DLQ. */
  dlqRetry(dlqIds: string[]): { messageId: string }[] {
    const now = Date.now();
    const responses: { messageId: string }[] = [];
    for (const id of dlqIds) {
      const entry = this.dlq.get(id);
      if (!entry) continue;
      this.dlq.delete(id);
      this.options.changed({ dlqDrop: id });
      const message: StoredMessage = { ...entry.message, messageId: newMessageId(), retried: 0, createdAt: now, notBefore: now };
      this.enqueue(message);
      responses.push({ messageId: message.messageId });
    }
    return responses;
  }

  idle(): Promise<void> {
    if (this.halted) return Promise.reject(new Error('QStash devstack is stopped'));
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve, reject) => this.idleWaiters.push({ resolve, reject }));
  }

  /** Stops timers and aborts attempts under way; what was pending stays pending in snapshot(). */
  async halt(): Promise<void> {
    this.halted = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.ready.clear();
    const flights = [...this.inFlight.values()];
    for (const flight of flights) {
      flight.halted = true;
      flight.controller.abort(new Error('QStash devstack is stopping'));
    }
    await Promise.all(flights.map((flight) => flight.done));
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const waiter of waiters) waiter.reject(new Error('QStash devstack stopped before going idle'));
  }

  private enqueue(message: StoredMessage): void {
    this.pending.set(message.messageId, message);
    this.schedule(message);
    this.options.changed({ put: message });
  }

  private schedule(message: StoredMessage): void {
    if (this.halted) return;
    const wait = message.notBefore - Date.now();
    if (wait <= 0) {
      this.ready.add(message.messageId);
      this.pump();
      return;
    }
    const timer = setTimeout(
      () => {
        this.timers.delete(message.messageId);
        if (this.pending.get(message.messageId) === message) this.schedule(message);
      },
      Math.min(wait, MAX_TIMER_MS),
    );
    timer.unref();
    this.timers.set(message.messageId, timer);
  }

  private pump(): void {
    for (const id of this.ready) {
      if (this.halted || this.inFlight.size >= this.options.maxInFlight) return;
      this.ready.delete(id);
      const message = this.pending.get(id);
      if (message && !this.inFlight.has(id)) this.start(message);
    }
  }

  private start(message: StoredMessage): void {
    const flight: Flight = { controller: new AbortController(), cancelled: false, halted: false, done: Promise.resolve() };
    this.inFlight.set(message.messageId, flight);
    flight.done = this.attempt(message, flight)
      .then((outcome) => {
        this.inFlight.delete(message.messageId);
        if (!flight.halted) this.settle(message, outcome, flight.cancelled);
      })
      .catch((error: unknown) => {
        // settle() does no I/O, so this is a bug; keep the message rather than lose it.
        this.inFlight.delete(message.messageId);
        this.options.log(`qstash: internal error delivering ${message.messageId}: ${(error as Error).stack ?? error}`);
      })
      .finally(() => {
        this.pump();
        this.checkIdle();
      });
  }

  private async attempt(message: StoredMessage, flight: Flight): Promise<Outcome> {
    const timeoutMs = message.timeoutMs ?? this.options.deliveryTimeoutMs;
    const timer = setTimeout(() => flight.controller.abort(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
    try {
      // fetch refuses a body on GET; the signature then covers the empty body actually sent.
      const body = message.method === 'GET' ? new Uint8Array() : new Uint8Array(Buffer.from(message.body, 'base64'));
      const headers = new Headers(message.headers);
      headers.set('User-Agent', 'Upstash-QStash');
      headers.set('Upstash-Message-Id', message.messageId);
      headers.set('Upstash-Retried', String(message.retried));
      headers.set('Upstash-Signature', await signDelivery(this.options.signingKey(), message.url, body));
      const response = await fetch(message.url, {
        method: message.method,
        headers,
        body: message.method === 'GET' ? undefined : body,
        signal: flight.controller.signal,
      });
      const responseBody = Buffer.from(await response.arrayBuffer());
      return {
        response: { status: response.status, headers: headerLists(response.headers), body: responseBody.toString('base64') },
      };
    } catch (error) {
      const reason = flight.controller.signal.aborted ? flight.controller.signal.reason : error;
      return { error: describeError(reason) };
    } finally {
      clearTimeout(timer);
    }
  }

  private settle(message: StoredMessage, outcome: Outcome, cancelled: boolean): void {
    const { response } = outcome;
    const retried = message.retried;
    const what = `${message.method} ${message.url} (${message.messageId}, retried ${retried}/${message.maxRetries})`;
    if (cancelled) {
      this.options.log(`qstash: ${what}: ${response?.status ?? outcome.error} after cancel, dropped`);
      return;
    }
    // QStash calls the callback after every attempt that got a response, not only the last.
    if (response && message.callback && !message.origin) {
      this.enqueue(this.reportMessage(message, message.callback, 'callback', callbackPayload(message, retried, response)));
    }
    if (response && response.status >= 200 && response.status < 300) {
      this.pending.delete(message.messageId);
      this.options.log(`qstash: ${what} delivered: ${response.status}`);
      this.options.changed({ drop: message.messageId });
      return;
    }

    const failure = response ? `HTTP ${response.status}` : outcome.error;
    if (retried < message.maxRetries) {
      message.retried = retried + 1;
      const delay = message.retryDelay ? compileRetryDelay(message.retryDelay)(retried) : this.options.backoffMs(message.retried);
      message.notBefore = Date.now() + delay;
      this.options.log(`qstash: ${what} failed: ${failure}; retry in ${Math.round(delay)} ms`);
      this.schedule(message);
      this.options.changed({ put: message });
      return;
    }

    this.pending.delete(message.messageId);
    const failedAt = Date.now();
    const seq = ++this.dlqSeq;
    const entry: DlqEntry = dropUndefined({
      dlqId: `${failedAt}-${seq}`,
      seq,
      message,
      failedAt,
      response,
      error: response ? undefined : outcome.error,
    });
    this.dlq.set(entry.dlqId, entry);
    this.options.changed({ drop: message.messageId });
    this.options.changed({ dlqPut: entry });
    this.options.log(`qstash: ${what} failed: ${failure}; retries exhausted, moved to the DLQ as ${entry.dlqId}`);
    if (message.failureCallback && !message.origin) {
      const payload = callbackPayload(message, retried, response, entry.dlqId);
      this.enqueue(this.reportMessage(message, message.failureCallback, 'failure-callback', payload));
    }
  }

  /** Callbacks are messages of their own: signed, retried, and dead-lettered like any other. */
  private reportMessage(
    source: StoredMessage,
    spec: CallbackSpec,
    origin: StoredMessage['origin'],
    payload: object,
  ): StoredMessage {
    const now = Date.now();
    return dropUndefined({
      messageId: newMessageId(),
      url: spec.url,
      method: spec.method,
      headers: { 'Content-Type': 'application/json', ...spec.headers },
      body: Buffer.from(JSON.stringify(payload)).toString('base64'),
      maxRetries: spec.retries ?? source.maxRetries,
      retried: 0,
      createdAt: now,
      notBefore: now + (spec.delayMs ?? 0),
      timeoutMs: spec.timeoutMs,
      origin,
    });
  }

  private expireDedup(now: number): void {
    // Insertion order is expiry order, as every record gets the same window.
    for (const [key, record] of this.dedup) {
      if (record.expiresAt > now) break;
      this.dedup.delete(key);
    }
  }

  private isIdle(): boolean {
    return this.pending.size === 0 && this.inFlight.size === 0;
  }

  private checkIdle(): void {
    if (!this.isIdle() || this.idleWaiters.length === 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const waiter of waiters) waiter.resolve();
  }
}

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}
