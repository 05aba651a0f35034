import { attemptDelivery, callbackMessage, type Outcome } from './attempt.ts';
import { dropUndefined } from './drop-undefined.ts';
import { Lane, type LaneInfo } from './flow-control.ts';
import { newMessageId } from './ids.ts';
import type { ParsedPublish } from './publish-request.ts';
import { compileRetryDelay } from './retry-delay.ts';
import type { StateChange } from './state-file.ts';
import type { DedupRecord, DlqEntry, StoredMessage } from './types.ts';
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

// setTimeout's ceiling; longer waits re-arm.
const MAX_TIMER_MS = 2_147_483_647;

/**
 * QStash's delivery side: pending messages wait for their time, run at most
 * maxInFlight at once, retry with backoff, and end delivered or in the DLQ.
 * Delivery is at-least-once: a message leaves `pending` only once an attempt has
 * ended, so a stop mid-attempt keeps it for the next start.
 *
 * Messages published with a flow-control key wait in their key's lane while it is at its
 * parallelism or rate (flow-control.ts); a held lane never holds back another, and messages
 * without a key share one lane with no limit. Of the lanes that may start one, the message
 * that fell due first goes first.
 */
export class DeliveryEngine {
  private readonly pending = new Map<string, StoredMessage>();
  private readonly dlq = new Map<string, DlqEntry>();
  private readonly dedup = new Map<string, DedupRecord>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** By flow-control key ('' for messages without one); each holds its due messages in order. */
  private readonly lanes = new Map<string, Lane>();
  /** When each waiting message fell due, as a sequence number: the order across lanes. */
  private readonly dueOrder = new Map<string, number>();
  private dueSeq = 0;
  /** Set while some lane waits for its rate window to end. */
  private rateWake?: { at: number; timer: NodeJS.Timeout };
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
      this.laneOf(message).owe(message.flowControl);
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
    const message = this.pending.get(messageId);
    if (!message) return false;
    this.pending.delete(messageId);
    clearTimeout(this.timers.get(messageId));
    this.timers.delete(messageId);
    const lane = this.laneOf(message);
    lane.ready.delete(messageId);
    lane.settle(message.flowControl);
    this.dueOrder.delete(messageId);
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

  /** A flow-control key's state, as GET /v2/flowControl/{key} answers it; undefined for a key never used. */
  flowControl(key: string): LaneInfo | undefined {
    return key === '' ? undefined : this.lanes.get(key)?.info(Date.now());
  }

  flowControls(): LaneInfo[] {
    const now = Date.now();
    return [...this.lanes.values()].filter((lane) => lane.key !== '').map((lane) => lane.info(now));
  }

  globalParallelism(): { parallelismMax: number; parallelismCount: number } {
    return { parallelismMax: this.options.maxInFlight, parallelismCount: this.inFlight.size };
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
    for (const lane of this.lanes.values()) lane.ready.clear();
    this.dueOrder.clear();
    clearTimeout(this.rateWake?.timer);
    this.rateWake = undefined;
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
    this.laneOf(message).owe(message.flowControl);
    this.schedule(message);
    this.options.changed({ put: message });
  }

  private schedule(message: StoredMessage): void {
    if (this.halted) return;
    const wait = message.notBefore - Date.now();
    if (wait <= 0) {
      this.laneOf(message).ready.add(message.messageId);
      this.dueOrder.set(message.messageId, ++this.dueSeq);
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

  private laneOf(message: StoredMessage): Lane {
    const key = message.flowControl?.key ?? '';
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = new Lane(key);
      this.lanes.set(key, lane);
    }
    return lane;
  }

  private pump(): void {
    if (this.halted) return;
    const now = Date.now();
    let wakeAt = Number.POSITIVE_INFINITY;
    while (this.inFlight.size < this.options.maxInFlight) {
      let next: { lane: Lane; id: string; order: number } | undefined;
      for (const lane of this.lanes.values()) {
        const head = lane.ready.values().next();
        if (head.done) continue;
        const admitted = lane.admits(now);
        if (!admitted.ok) {
          if (admitted.retryAt !== undefined) wakeAt = Math.min(wakeAt, admitted.retryAt);
          continue;
        }
        const order = this.dueOrder.get(head.value) ?? 0;
        if (!next || order < next.order) next = { lane, id: head.value, order };
      }
      if (!next) break;
      next.lane.ready.delete(next.id);
      this.dueOrder.delete(next.id);
      const message = this.pending.get(next.id);
      if (message && !this.inFlight.has(next.id)) this.start(message, next.lane, now);
    }
    if (wakeAt !== Number.POSITIVE_INFINITY) this.wakeAt(wakeAt);
  }

  /** Looks at the lanes again when a rate window ends; one timer, for the earliest. */
  private wakeAt(at: number): void {
    if (this.rateWake && this.rateWake.at <= at) return;
    clearTimeout(this.rateWake?.timer);
    const timer = setTimeout(
      () => {
        this.rateWake = undefined;
        this.pump();
      },
      Math.max(0, at - Date.now()),
    );
    timer.unref();
    this.rateWake = { at, timer };
  }

  private start(message: StoredMessage, lane: Lane, now: number): void {
    const flight: Flight = { controller: new AbortController(), cancelled: false, halted: false, done: Promise.resolve() };
    this.inFlight.set(message.messageId, flight);
    lane.start(now);
    flight.done = attemptDelivery(message, this.options.signingKey(), this.options.deliveryTimeoutMs, flight.controller)
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
        lane.end();
        this.pump();
        this.checkIdle();
      });
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
      this.enqueue(callbackMessage(message, message.callback, 'callback', callbackPayload(message, retried, response)));
    }
    if (response && response.status >= 200 && response.status < 300) {
      this.pending.delete(message.messageId);
      this.laneOf(message).settle(message.flowControl);
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
    this.laneOf(message).settle(message.flowControl);
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
      this.enqueue(callbackMessage(message, message.failureCallback, 'failure-callback', payload));
    }
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
