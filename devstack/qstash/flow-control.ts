import { parseDuration } from './durations.ts';
import { badRequest } from './errors.ts';

/** A message's Upstash-Flow-Control-Key and -Value, kept with it (and persisted) until it is no longer owed. */
export interface FlowControl {
  key: string;
  /** Deliveries of the key under way at once. */
  parallelism?: number;
  /** Deliveries of the key started per period. */
  rate?: number;
  /** The rate's window; QStash's default is one second. */
  periodMs?: number;
}

// QStash's resource-name rule (its SDKs check the same pattern before sending).
const KEY = /^[A-Za-z0-9._-]+$/;
const DEFAULT_PERIOD_MS = 1000;

/**
 * Upstash-Flow-Control-Key and Upstash-Flow-Control-Value (`parallelism=4, rate=10, period=1m`, names in any
 * case, as the SDK and QStash's curl examples write them). A key needs at least one limit, as the SDK insists;
 * a value without a key limits nothing.
 */
export function parseFlowControl(headers: Headers): FlowControl | undefined {
  const key = headers.get('upstash-flow-control-key');
  if (key === null) return undefined;
  if (!KEY.test(key)) {
    throw badRequest(`invalid Upstash-Flow-Control-Key: ${key} (letters, digits, '-', '_' and '.' only)`);
  }
  const value = headers.get('upstash-flow-control-value') ?? '';
  const control: FlowControl = { key };
  for (const part of value.split(',')) {
    if (part.trim() === '') continue;
    const [name = '', setting = ''] = part.split('=').map((text) => text.trim());
    const fail = () => badRequest(`invalid Upstash-Flow-Control-Value: ${value} (${part.trim()})`);
    switch (name.toLowerCase()) {
      case 'parallelism':
        control.parallelism = positiveCount(setting, fail);
        break;
      case 'rate':
      case 'ratepersecond':
        control.rate = positiveCount(setting, fail);
        break;
      case 'period': {
        const ms = parseDuration(setting);
        if (!ms) throw fail();
        control.periodMs = ms;
        break;
      }
      default:
        throw fail();
    }
  }
  if (control.parallelism === undefined && control.rate === undefined) {
    throw badRequest('Upstash-Flow-Control-Value must set parallelism or rate for an Upstash-Flow-Control-Key');
  }
  return control;
}

function positiveCount(text: string, fail: () => Error): number {
  if (!/^\d+$/.test(text) || Number(text) < 1) throw fail();
  return Number(text);
}

/** What GET /v2/flowControl/{key} answers, in @upstash/qstash's FlowControlInfo shape. */
export interface LaneInfo {
  flowControlKey: string;
  waitListSize: number;
  parallelismMax: number;
  parallelismCount: number;
  rateMax: number;
  rateCount: number;
  ratePeriod: number;
  ratePeriodStart: number;
  isPaused: boolean;
  isPinnedParallelism: boolean;
  isPinnedRate: boolean;
}

/**
 * The deliveries of one flow-control key (or of every message without one, under the key ''): those due
 * and held back, those under way, and the rate window. QStash keeps each message's limits with it, and
 * while old and new publishes of a key disagree it allows the highest, so the limits of every message
 * still owed are counted, and the most generous applies.
 */
export class Lane {
  /** Due and waiting for the lane (or the devstack's overall limit), in the order they fell due. */
  readonly ready = new Set<string>();
  inFlight = 0;
  private readonly parallelisms = new Map<number, number>();
  private readonly rates = new Map<string, number>();
  private windowStart = 0;
  private windowCount = 0;
  /** The limits last published, reported once nothing is owed (QStash keeps a key's configuration). */
  private last: FlowControl | undefined;

  constructor(readonly key: string) {}

  /** A message of this lane is owed (published, retrying, or restored at start). */
  owe(control: FlowControl | undefined): void {
    if (control) this.last = control;
    if (control?.parallelism) bump(this.parallelisms, control.parallelism, 1);
    if (control?.rate) bump(this.rates, rateKey(control), 1);
  }

  /** It is no longer owed: delivered, dead-lettered or cancelled. */
  settle(control: FlowControl | undefined): void {
    if (control?.parallelism) bump(this.parallelisms, control.parallelism, -1);
    if (control?.rate) bump(this.rates, rateKey(control), -1);
  }

  /**
   * Whether one more delivery may start now; when only the rate holds it back, `retryAt` says when the
   * window ends, so the caller can look again then.
   */
  admits(now: number): { ok: true } | { ok: false; retryAt?: number } {
    const parallelism = this.parallelismMax();
    if (parallelism !== undefined && this.inFlight >= parallelism) return { ok: false };
    const rate = this.rate();
    if (!rate) return { ok: true };
    if (now >= this.windowStart + rate.periodMs) return { ok: true };
    if (this.windowCount < rate.rate) return { ok: true };
    return { ok: false, retryAt: this.windowStart + rate.periodMs };
  }

  /** A delivery of this lane starts: it counts against the parallelism until it ends, and against the rate window. */
  start(now: number): void {
    this.inFlight++;
    const rate = this.rate();
    if (!rate) return;
    // Fixed windows, each opened by the first delivery after the last one closed (QStash reports ratePeriodStart).
    if (now >= this.windowStart + rate.periodMs) {
      this.windowStart = now;
      this.windowCount = 0;
    }
    this.windowCount++;
  }

  end(): void {
    this.inFlight--;
  }

  info(now: number): LaneInfo {
    const rate =
      this.rate() ?? (this.last?.rate ? { rate: this.last.rate, periodMs: this.last.periodMs ?? DEFAULT_PERIOD_MS } : undefined);
    const windowOpen = rate !== undefined && now < this.windowStart + rate.periodMs;
    return {
      flowControlKey: this.key,
      waitListSize: this.ready.size,
      parallelismMax: this.parallelismMax() ?? this.last?.parallelism ?? 0,
      parallelismCount: this.inFlight,
      rateMax: rate?.rate ?? 0,
      rateCount: windowOpen ? this.windowCount : 0,
      ratePeriod: Math.round((rate?.periodMs ?? 0) / 1000),
      ratePeriodStart: windowOpen ? Math.floor(this.windowStart / 1000) : 0,
      isPaused: false,
      isPinnedParallelism: false,
      isPinnedRate: false,
    };
  }

  private parallelismMax(): number | undefined {
    return this.parallelisms.size > 0 ? Math.max(...this.parallelisms.keys()) : undefined;
  }

  /** The most generous rate among those owed: the most deliveries per unit of time. */
  private rate(): { rate: number; periodMs: number } | undefined {
    let best: { rate: number; periodMs: number } | undefined;
    for (const key of this.rates.keys()) {
      const [rate, periodMs] = key.split('/').map(Number) as [number, number];
      if (!best || rate / periodMs > best.rate / best.periodMs) best = { rate, periodMs };
    }
    return best;
  }
}

function rateKey(control: FlowControl): string {
  return `${control.rate}/${control.periodMs ?? DEFAULT_PERIOD_MS}`;
}

function bump<K>(counts: Map<K, number>, key: K, by: number): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next > 0) counts.set(key, next);
  else counts.delete(key);
}
