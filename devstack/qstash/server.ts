import type { IncomingMessage } from 'node:http';
import { type Context, Hono } from 'hono';
import { DeliveryEngine } from './engine.ts';
import { badRequest, notFound, QStashError } from './errors.ts';
import { newSigningKey } from './ids.ts';
import { type ParsedPublish, parsePublish } from './publish-request.ts';
import { createStateWriter, type PersistedState, readState, type SigningKeys, type StateChange } from './state-file.ts';
import type { DlqEntry, StoredMessage } from './types.ts';
import { dlqPayload, messagePayload } from './wire.ts';

export interface QStashOptions {
  /** Bearer token clients must present. */
  token: string;
  /** Like QStash's: sig_xxx strings. */
  currentSigningKey: string;
  nextSigningKey: string;
  /** Persist pending messages + DLQ here (JSON file), so a devstack restart loses nothing. Optional (tests use memory). */
  stateFile?: string;
  /** Backoff for retry n (1-based): default min(86_400_000, Math.exp(2.5 * n) * 1000) ms like QStash; tests pass a fast one. */
  backoffMs?: (retry: number) => number;
  /** Per-delivery HTTP timeout, default 30 s (Workers-like). */
  deliveryTimeoutMs?: number;
  /**
   * Deliveries under way at once, across destinations; default DEVSTACK_QSTASH_PARALLELISM, else 24.
   * QStash itself has no such limit for a plain publish; this keeps a two-core machine busy
   * (24 ingested about 10 % more small documents a second than 8 in bench/load/load.ts) without
   * burying one workerd in requests.
   */
  maxInFlight?: number;
  /** How long a deduplication id (or content key) is remembered; default 10 minutes. */
  deduplicationWindowMs?: number;
  /** Largest accepted message body; default 1 MiB, QStash's message size limit on its base plans. */
  maxMessageBytes?: number;
  log?: (line: string) => void;
}

export interface QStash {
  /** Mount at /qstash. */
  app: Hono;
  signingKeys(): { current: string; next: string };
  /** Resolves when no message is pending or in flight (tests/bench). */
  idle(): Promise<void>;
  /** Stop timers, flush state. */
  stop(): Promise<void>;
}

const defaultBackoff = (retry: number) => Math.min(86_400_000, Math.exp(2.5 * retry) * 1000);
const DEFAULT_BULK_COUNT = 100;

/**
 * The subset of QStash v2 that @upstash/qstash uses: publish, batch, messages, DLQ,
 * signing keys and flow control (read only), delivering over real HTTP with signed
 * requests and retries.
 * The SDK joins its baseUrl and paths with "/", so mounted at /qstash the publish
 * path is /qstash/v2/publish/<destination URL>.
 */
export function createQStashServer(options: QStashOptions): QStash {
  for (const name of ['token', 'currentSigningKey', 'nextSigningKey'] as const) {
    if (typeof options[name] !== 'string' || options[name] === '')
      throw new Error(`createQStashServer: ${name} must be a non-empty string`);
  }
  const log = options.log ?? (() => {});
  const maxMessageBytes = options.maxMessageBytes ?? 1024 * 1024;
  const configured: SigningKeys = { current: options.currentSigningKey, next: options.nextSigningKey };
  const stored = options.stateFile ? readState(options.stateFile) : undefined;
  let keys: SigningKeys =
    stored?.keys && sameKeys(stored.keys.configured, configured) ? { ...stored.keys.active } : { ...configured };

  let engine: DeliveryEngine | undefined;
  const snapshot = (): PersistedState => ({ version: 1, keys: { configured, active: keys }, ...engine!.snapshot() });
  const writer = options.stateFile ? createStateWriter(options.stateFile, snapshot) : undefined;
  const persist = () => writer?.save() ?? Promise.resolve();
  const persistInBackground = (change: StateChange) => {
    writer?.record(change);
    persist().catch((error: Error) => log(`qstash: could not save state to ${options.stateFile}: ${error.message}`));
  };

  engine = new DeliveryEngine({
    signingKey: () => keys.current,
    backoffMs: options.backoffMs ?? defaultBackoff,
    deliveryTimeoutMs: options.deliveryTimeoutMs ?? 30_000,
    maxInFlight: options.maxInFlight ?? (Number(process.env.DEVSTACK_QSTASH_PARALLELISM) || 24),
    deduplicationWindowMs: options.deduplicationWindowMs ?? 10 * 60_000,
    log,
    changed: persistInBackground,
    initial: stored,
  });
  const queue = engine;
  if (stored) log(`qstash: resumed ${stored.messages.length} pending message(s) and ${stored.dlq.length} in the DLQ`);

  let stopped = false;
  let stopping: Promise<void> | undefined;
  const app = new Hono();

  app.onError((error, c) => {
    if (error instanceof QStashError) return c.json({ error: error.message }, error.status);
    log(`qstash: ${c.req.method} ${c.req.path} failed: ${error.stack ?? error}`);
    return c.json({ error: `internal error: ${error.message}` }, 500);
  });

  app.use('*', async (c, next) => {
    if (stopped) return c.json({ error: 'the QStash devstack is stopped' }, 503);
    const header = c.req.header('authorization');
    const token = header?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim();
    if (!token) return c.json({ error: 'missing Authorization header: expected "Bearer <QSTASH_TOKEN>"' }, 401);
    if (token !== options.token) return c.json({ error: 'invalid token' }, 401);
    await next();
  });

  // A new message answers 201; a duplicate 202 with the first message's id.
  app.post('/v2/publish/*', async (c) => {
    const url = new URL(c.req.url);
    const marker = '/v2/publish/';
    const destination = url.pathname.slice(url.pathname.indexOf(marker) + marker.length) + url.search;
    const body = await readBody(c.req.raw, maxMessageBytes);
    const parsed = parsePublish({ destination, headers: c.req.raw.headers, body, callerIp: callerIp(c), now: Date.now() });
    const result = queue.publish(parsed);
    await persist();
    return c.json(result, result.deduplicated ? 202 : 201);
  });

  app.post('/v2/batch', async (c) => {
    const text = new TextDecoder().decode(await readBody(c.req.raw, maxMessageBytes * 100));
    let entries: unknown;
    try {
      entries = JSON.parse(text);
    } catch {
      throw badRequest('batch body must be a JSON array of {destination, headers, body}');
    }
    if (!Array.isArray(entries) || entries.length === 0) {
      throw badRequest('batch body must be a non-empty JSON array of {destination, headers, body}');
    }
    const now = Date.now();
    const parsed = entries.map((entry, index) => parseBatchEntry(entry, index, now, maxMessageBytes, callerIp(c)));
    const results = parsed.map((message) => queue.publish(message));
    await persist();
    return c.json(results, 201);
  });

  app.get('/v2/messages/:messageId', (c) => {
    const message = queue.get(c.req.param('messageId'));
    if (!message) throw notFound(`message ${c.req.param('messageId')} not found`);
    return c.json(messagePayload(message));
  });

  app.delete('/v2/messages/:messageId', async (c) => {
    if (!queue.cancel(c.req.param('messageId'))) throw notFound(`message ${c.req.param('messageId')} not found`);
    await persist();
    return c.json({ cancelled: 1 });
  });

  app.delete('/v2/messages', async (c) => {
    const ids = c.req.queries('messageIds');
    const filter = messageFilter(c);
    if (!ids && !filter && c.req.query('all') === undefined && c.req.query('count') === undefined) {
      throw badRequest('say which messages to cancel: messageIds, a filter (url, label, host, path), or all');
    }
    const targets =
      ids ??
      queue
        .pendingMessages()
        .filter((message) => !filter || filter(message))
        .map((m) => m.messageId);
    let cancelled = 0;
    for (const id of targets) if (queue.cancel(id)) cancelled++;
    await persist();
    return c.json({ cancelled });
  });

  app.get('/v2/dlq', (c) => {
    const count = parseCount(c.req.query('count'));
    const { entries, cursor } = selectDlq(queue.dlqEntries(), c, count);
    return c.json(cursor ? { messages: entries.map(dlqPayload), cursor } : { messages: entries.map(dlqPayload) });
  });

  app.get('/v2/dlq/:dlqId', (c) => {
    const entry = queue.dlqGet(c.req.param('dlqId'));
    if (!entry) throw notFound(`dlq message ${c.req.param('dlqId')} not found`);
    return c.json(dlqPayload(entry));
  });

  app.delete('/v2/dlq/:dlqId', async (c) => {
    if (!queue.dlqDelete([c.req.param('dlqId')])) throw notFound(`dlq message ${c.req.param('dlqId')} not found`);
    await persist();
    return c.body(null, 200);
  });

  app.delete('/v2/dlq', async (c) => {
    // Older clients send {"dlqIds": [...]} as the body; the SDK sends query parameters.
    const bodyIds = await optionalJsonIds(c.req.raw);
    if (!bodyIds) requireBulkScope(c, 'delete');
    const count = parseCount(c.req.query('count')) ?? DEFAULT_BULK_COUNT;
    const { entries, cursor } = bodyIds
      ? { entries: bodyIds.flatMap((id) => queue.dlqGet(id) ?? []), cursor: undefined }
      : selectDlq(queue.dlqEntries(), c, count);
    const deleted = queue.dlqDelete(entries.map((entry) => entry.dlqId));
    await persist();
    return c.json(cursor ? { deleted, cursor } : { deleted });
  });

  app.post('/v2/dlq/retry', async (c) => {
    requireBulkScope(c, 'retry');
    const count = parseCount(c.req.query('count')) ?? DEFAULT_BULK_COUNT;
    const { entries, cursor } = selectDlq(queue.dlqEntries(), c, count);
    const responses = queue.dlqRetry(entries.map((entry) => entry.dlqId));
    await persist();
    return c.json(cursor ? { responses, cursor } : { responses });
  });

  app.get('/v2/flowControl', (c) => c.json(queue.flowControls()));

  app.get('/v2/flowControl/:key', (c) => {
    const info = queue.flowControl(c.req.param('key'));
    if (!info) throw notFound(`flow control key ${c.req.param('key')} not found`);
    return c.json(info);
  });

  app.get('/v2/globalParallelism', (c) => c.json(queue.globalParallelism()));

  app.get('/v2/keys', (c) => c.json(keys));

  app.post('/v2/keys/rotate', async (c) => {
    keys = { current: keys.next, next: newSigningKey() };
    log('qstash: signing keys rotated');
    writer?.record({ keys: { configured, active: keys } });
    await persist();
    return c.json(keys);
  });

  app.all('*', (c) => c.json({ error: `${c.req.method} ${c.req.path} is not supported by the QStash devstack` }, 404));

  return {
    app,
    signingKeys: () => ({ ...keys }),
    idle: () => queue.idle(),
    stop() {
      stopping ??= (async () => {
        stopped = true;
        await queue.halt();
        await persist();
      })();
      return stopping;
    },
  };
}

function sameKeys(a: SigningKeys, b: SigningKeys): boolean {
  return a.current === b.current && a.next === b.next;
}

async function readBody(request: Request, limit: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get('content-length') ?? 0);
  if (declared > limit) throw new QStashError(413, `message body is ${declared} bytes; the limit is ${limit}`);
  const body = new Uint8Array(await request.arrayBuffer());
  if (body.byteLength > limit) throw new QStashError(413, `message body is ${body.byteLength} bytes; the limit is ${limit}`);
  return body;
}

function callerIp(c: Context): string | undefined {
  return (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket?.remoteAddress;
}

function parseBatchEntry(entry: unknown, index: number, now: number, limit: number, ip: string | undefined): ParsedPublish {
  const fail = (message: string) => badRequest(`batch[${index}]: ${message}`);
  if (typeof entry !== 'object' || entry === null) throw fail('must be an object {destination, headers, body}');
  const { destination, headers, body } = entry as Record<string, unknown>;
  if (typeof destination !== 'string') throw fail('destination must be a string');
  if (body !== undefined && typeof body !== 'string') throw fail('body must be a string');
  if (headers !== undefined && (typeof headers !== 'object' || headers === null || Array.isArray(headers))) {
    throw fail('headers must be an object of strings');
  }
  const headerList = new Headers();
  for (const [name, value] of Object.entries((headers ?? {}) as Record<string, unknown>)) {
    if (typeof value !== 'string') throw fail(`header ${name} must be a string`);
    try {
      headerList.set(name, value);
    } catch {
      throw fail(`invalid header ${name}`);
    }
  }
  const bytes = new TextEncoder().encode(body ?? '');
  if (bytes.byteLength > limit)
    throw new QStashError(413, `batch[${index}]: message body is ${bytes.byteLength} bytes; the limit is ${limit}`);
  try {
    return parsePublish({ destination, headers: headerList, body: bytes, callerIp: ip, now });
  } catch (error) {
    if (error instanceof QStashError) throw new QStashError(error.status, `batch[${index}]: ${error.message}`);
    throw error;
  }
}

/** A bulk DLQ call with no ids, filter or count would touch everything; the SDK always says which. */
function requireBulkScope(c: Context, action: string): void {
  const query = new URL(c.req.url).searchParams;
  if ([...query.keys()].some((key) => key !== 'cursor')) return;
  throw badRequest(`say which DLQ messages to ${action}: dlqIds, a filter, or all (count)`);
}

function parseCount(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 1) throw badRequest(`invalid count: ${value} (a whole number >= 1)`);
  return Number(value);
}

function messageFilter(c: Context): ((message: StoredMessage) => boolean) | undefined {
  const urls = c.req.queries('url');
  const labels = c.req.queries('label');
  const hosts = c.req.queries('host');
  const paths = c.req.queries('path');
  if (!urls && !labels && !hosts && !paths) return undefined;
  return (message) => {
    const url = URL.parse(message.url);
    return (
      (!urls || urls.includes(message.url)) &&
      (!labels || labels.some((label) => message.label?.split(',').includes(label))) &&
      (!hosts || (url !== null && hosts.includes(url.host))) &&
      (!paths || (url !== null && paths.includes(url.pathname)))
    );
  };
}

/** The DLQ page a list/delete/retry call asks for: by dlqIds, or by filters after the cursor. */
function selectDlq(all: DlqEntry[], c: Context, count: number | undefined): { entries: DlqEntry[]; cursor?: string } {
  const ids = c.req.queries('dlqIds');
  if (ids) return { entries: all.filter((entry) => ids.includes(entry.dlqId)) };

  const cursorText = c.req.query('cursor');
  if (cursorText !== undefined && cursorText !== '' && !/^\d+$/.test(cursorText))
    throw badRequest(`invalid cursor: ${cursorText}`);
  const after = cursorText ? Number(cursorText) : 0;
  const messageFilterFn = messageFilter(c);
  const messageIds = c.req.queries('messageId');
  const statuses = c.req.queries('responseStatus')?.map(Number);
  const from = numberQuery(c, 'fromDate');
  const to = numberQuery(c, 'toDate');
  const matching = all.filter(
    (entry) =>
      entry.seq > after &&
      (!messageFilterFn || messageFilterFn(entry.message)) &&
      (!messageIds || messageIds.includes(entry.message.messageId)) &&
      (!statuses || (entry.response !== undefined && statuses.includes(entry.response.status))) &&
      (from === undefined || entry.failedAt >= from) &&
      (to === undefined || entry.failedAt <= to),
  );
  const page = count === undefined ? matching : matching.slice(0, count);
  const last = page.at(-1);
  return page.length < matching.length && last ? { entries: page, cursor: String(last.seq) } : { entries: page };
}

function numberQuery(c: Context, name: string): number | undefined {
  const value = c.req.query(name);
  if (value === undefined || value === '') return undefined;
  if (!/^\d+$/.test(value)) throw badRequest(`invalid ${name}: ${value} (unix milliseconds)`);
  return Number(value);
}

async function optionalJsonIds(request: Request): Promise<string[] | undefined> {
  const text = await request.text();
  if (!text.trim()) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw badRequest('body must be JSON {"dlqIds": [...]}, or send dlqIds as query parameters');
  }
  const ids = (parsed as { dlqIds?: unknown })?.dlqIds;
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) throw badRequest('dlqIds must be an array of strings');
  return ids;
}
