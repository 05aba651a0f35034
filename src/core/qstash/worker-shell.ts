import { Receiver } from '@upstash/qstash';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { z } from 'zod';
import { readCapped } from '../bodies.ts';
import { decodeBase64Text } from '../bytes.ts';
import { connect, type Sql } from '../db/client.ts';
import { DomainError } from '../errors.ts';
import { MAX_QSTASH_BODY_BYTES } from '../limits.ts';
import { createLogger, type Logger, newRequestId, secretsOf, type WorkerName } from '../log.ts';
import { messageIds, requestIdOf } from '../messages/request-id.ts';
import { countDeadLetters } from './dead-letters.ts';

export interface DeliverySettings {
  /** This worker's public URL: signatures are checked against it plus the request's path. */
  workerUrl: string;
  currentSigningKey: string;
  nextSigningKey: string;
}

/**
 * Where a run stands among its message's attempts: the last one records a failure instead of
 * throwing for a retry. QStash's signature covers the URL and the body, not its `Upstash-Retried`
 * header, so whoever replays a captured delivery within its signature's 5 minutes could claim any
 * count, and make a passing failure final. The header is therefore never read: an ordinary delivery
 * is not the last (NOT_LAST), and a message is ended for good by QStash's failure callback, whose
 * body, signed, says how many attempts were made and what the last one answered.
 */
export interface Attempt {
  /** Retries made before this run, as a signed source says: the failure callback's count, else 0. */
  retried: number;
  final: boolean;
}

/** Longer than any message of ours; what the failure callback reads back is no longer. */
const MAX_FINAL_MESSAGE_CHARS = 1000;

/** Every ordinary delivery: QStash retries it if it throws, and calls the failure callback after the last. */
export const NOT_LAST: Attempt = { retried: 0, final: false };

/** What QStash's failure callback says, signed, about a message every attempt of which failed. */
export interface Ending {
  /** Deliveries made, when QStash says. */
  attempts: number | undefined;
  /** The last attempt's RetryLater message, when its answer carried one. */
  lastFailure: string | undefined;
}

/**
 * Thrown to have QStash retry, naming how the message should end if this attempt was its last. The
 * 500's body carries the message, and QStash hands that body back, signed, to the failure callback.
 * Our own plain words only: it is stored as a user-facing message.
 */
export class RetryLater extends Error {
  constructor(
    readonly finalMessage: string,
    options?: { cause?: unknown },
  ) {
    super(finalMessage, options);
    this.name = 'RetryLater';
  }
}

/**
 * Resolving means "done, do not retry", and an object it resolves to is answered with `ok: true`;
 * throwing makes QStash retry.
 */
type Handled = Promise<unknown>;

export interface MessageRoute<D, M> {
  message: z.ZodType<M>;
  /** The 400's detail for a signed body that is not such a message. */
  refusal: string;
  handle(deps: D, message: M, attempt: Attempt): Handled;
}

export interface FailureRoute<D, M> {
  path: string;
  message: z.ZodType<M>;
  refusal: string;
  /** Every delivery of `message` failed: the one place a message is ended for good. */
  handle(deps: D, message: M, ending: Ending): Handled;
}

/** `E` is the worker's bindings, as `wrangler types` generates them from its wrangler.toml. */
export interface QStashWorker<C extends WorkerSettings, D, M, E extends object = object> {
  /** The worker's settings, parsed once per env; a bad one is a DomainError('misconfigured'). */
  loadConfig(env: E): C;
  signing(config: C): DeliverySettings;
  /**
   * One delivery's dependencies, around a database client of its own, with its logger: the message's
   * request id, which every message it queues carries on (tracedQueue).
   */
  deps(config: C, sql: Sql, log: Logger): D;
  routes: Record<string, MessageRoute<D, M>>;
  failures: FailureRoute<D, M>;
  /** The 500's detail when a delivery fails for any reason but the worker's configuration. */
  retryDetail: string;
  /** The `worker` field of its log lines. */
  name: WorkerName;
}

/** Settings every QStash worker has: its database, and the queue whose dead letters the sweep counts. */
type WorkerSettings = { HYPERDRIVE: { connectionString: string }; QSTASH_URL: string; QSTASH_TOKEN?: string };

/**
 * QStash's failure callback carries the original message and the last answer's body, both
 * base64-encoded, and how often the message was retried.
 */
const FailureCallback = z.object({
  sourceBody: z.string(),
  retried: z.number().int().min(0).optional(),
  body: z.string().optional(),
});
const RetryAnswer = z.object({ final_message: z.string().min(1).max(MAX_FINAL_MESSAGE_CHARS) });

type WorkerEnv<C, E extends object> = { Bindings: E; Variables: { config: C; body: string; log: Logger } };

/**
 * A QStash-triggered worker: health without a signature; every POST signed by QStash for this
 * URL and body (else 401, nothing done; a POST without the signature header is 401, and one
 * over MAX_QSTASH_BODY_BYTES 413, before its body is read); each message route and the failure
 * callback parse their body (else 400) and run with the delivery's dependencies. Any failure
 * is a 500, which makes QStash retry; its detail names a bad setting, or says the delivery
 * will be retried.
 */
export function createQStashWorker<C extends WorkerSettings, D, M, E extends object = object>(
  worker: QStashWorker<C, D, M, E>,
): Hono<WorkerEnv<C, E>> {
  const app = new Hono<WorkerEnv<C, E>>();
  app.get('/health', (c) => c.json({ ok: true }));
  app.use('*', verifyDeliveries(worker));

  /** The database client is closed after the response, off its critical path. */
  const withDeps = async (c: Context<WorkerEnv<C, E>>, run: (deps: D) => Handled) => {
    const sql = connect(c.var.config.HYPERDRIVE.connectionString);
    const started = Date.now();
    try {
      const result = await run(worker.deps(c.var.config, sql, c.var.log));
      const outcome = typeof result === 'object' && result !== null ? (result as { outcome?: unknown }).outcome : undefined;
      c.var.log.info('delivery', {
        path: new URL(c.req.url).pathname,
        ms: Date.now() - started,
        ...(typeof outcome === 'string' ? { outcome } : {}),
      });
      return c.json({ ok: true, ...(typeof result === 'object' ? result : undefined) });
    } finally {
      c.executionCtx.waitUntil(sql.end({ timeout: 5 }));
    }
  };

  for (const [path, route] of Object.entries(worker.routes)) {
    app.post(path, async (c) => {
      const message = parseMessage(route.message, c.var.body);
      if (!message) return c.json({ detail: route.refusal }, 400);
      return withDeps(c, (deps) => route.handle(deps, message, NOT_LAST));
    });
  }

  const failures = worker.failures;
  app.post(failures.path, async (c) => {
    const callback = parseMessage(FailureCallback, c.var.body);
    const message = callback && parseMessage(failures.message, decodeBase64Text(callback.sourceBody));
    if (!message) return c.json({ detail: failures.refusal }, 400);
    const ending: Ending = {
      attempts: callback.retried === undefined ? undefined : callback.retried + 1,
      lastFailure: callback.body ? parseMessage(RetryAnswer, decodeBase64Text(callback.body))?.final_message : undefined,
    };
    return withDeps(c, (deps) => failures.handle(deps, message, ending));
  });

  app.onError((error, c) => {
    // A non-2xx makes QStash retry; the details stay in the log.
    const log = c.var.log ?? createLogger({ worker: worker.name, request_id: newRequestId() });
    log.error('delivery_failed', error, { path: new URL(c.req.url).pathname });
    if (error instanceof DomainError && error.kind === 'misconfigured') return c.json({ detail: error.message }, 500);
    if (error instanceof RetryLater) {
      return c.json({ detail: worker.retryDetail, final_message: error.finalMessage.slice(0, MAX_FINAL_MESSAGE_CHARS) }, 500);
    }
    return c.json({ detail: worker.retryDetail }, 500);
  });
  return app;
}

const UNSIGNED = 'Invalid or missing QStash signature';
const OVERSIZED = `A QStash delivery holds at most ${MAX_QSTASH_BODY_BYTES / 1024} KB`;

/**
 * For every POST: a valid QStash signature for this URL and this exact body, else 401 with
 * nothing done. Without the signature header, or declaring a body larger than any QStash
 * message, it answers 401 or 413 before reading the body; a body that streams past the cap is
 * 413 with no more than the cap kept. The verified body and the worker's settings are left in
 * `c.var`.
 */
function verifyDeliveries<C extends WorkerSettings, E extends object>(
  worker: Pick<QStashWorker<C, unknown, unknown, E>, 'loadConfig' | 'signing' | 'name'>,
): MiddlewareHandler<WorkerEnv<C, E>> {
  return async (c, next) => {
    if (c.req.method !== 'POST') return next();
    const signature = c.req.header('upstash-signature');
    if (!signature) return c.json({ detail: UNSIGNED }, 401);
    if (Number(c.req.header('content-length') ?? 0) > MAX_QSTASH_BODY_BYTES) return c.json({ detail: OVERSIZED }, 413);
    const bytes = await readCapped(c.req.raw.body, MAX_QSTASH_BODY_BYTES, 'discard');
    if (!bytes) return c.json({ detail: OVERSIZED }, 413);
    const body = new TextDecoder().decode(bytes);
    const config = worker.loadConfig(c.env);
    const { workerUrl, currentSigningKey, nextSigningKey } = worker.signing(config);
    const receiver = new Receiver({ currentSigningKey, nextSigningKey });
    const url = `${workerUrl.replace(/\/+$/, '')}${new URL(c.req.url).pathname}`;
    const valid = await receiver.verify({ signature, body, url }).catch(() => false);
    if (!valid) return c.json({ detail: UNSIGNED }, 401);
    c.set('body', body);
    c.set('config', config);
    c.set(
      'log',
      createLogger(
        { worker: worker.name, request_id: requestIdOf(body) ?? newRequestId(), ...messageIds(body) },
        { secrets: secretsOf(config) },
      ),
    );
    return next();
  };
}

/** A message body, or undefined when it is not JSON of that shape. */
function parseMessage<T>(schema: z.ZodType<T>, text: string): T | undefined {
  try {
    const result = schema.safeParse(JSON.parse(text));
    return result.success ? result.data : undefined;
  } catch {
    return undefined;
  }
}

/** How long the sweep waits for QStash's dead-letter listing. */
const DEAD_LETTERS_TIMEOUT_MS = 10_000;

/**
 * The worker's cron handler: `sweep` runs with the same dependencies as a delivery, on a database
 * client of its own, closed when it ends, under a request id of its own. It then counts QStash's
 * dead-letter queue and logs the count (`dead_letters`, a warning when there are any), which an
 * alert can watch. A failed sweep or count is logged; the next cron tries again.
 */
export function sweepOnSchedule<C extends WorkerSettings, D, E extends object = object>(
  worker: Pick<QStashWorker<C, D, unknown, E>, 'loadConfig' | 'deps' | 'name'>,
  sweep: (deps: D) => Promise<unknown>,
): (controller: unknown, env: E, ctx: { waitUntil(work: Promise<unknown>): void }) => void {
  return (_controller, env, ctx) => {
    const config = worker.loadConfig(env);
    const log = createLogger({ worker: worker.name, request_id: newRequestId() }, { secrets: secretsOf(config) });
    const sql = connect(config.HYPERDRIVE.connectionString);
    const swept = sweep(worker.deps(config, sql, log))
      .then((result) => log.info('sweep', typeof result === 'object' && result !== null ? countsOf(result) : {}))
      .catch((error: unknown) => log.error('sweep_failed', error))
      .finally(() => sql.end({ timeout: 5 }));
    const token = config.QSTASH_TOKEN;
    const counted = token
      ? countDeadLetters({ url: config.QSTASH_URL, token }, { signal: AbortSignal.timeout(DEAD_LETTERS_TIMEOUT_MS) }).then(
          ({ count, more }) => (count > 0 ? log.warn : log.info)('dead_letters', { count, more }),
          (error: unknown) => log.error('dead_letters_failed', error),
        )
      : undefined;
    ctx.waitUntil(Promise.all([swept, counted]));
  };
}

/** The sweep's counts, for its log line. */
function countsOf(result: object): Record<string, number> {
  return Object.fromEntries(Object.entries(result).filter((entry): entry is [string, number] => typeof entry[1] === 'number'));
}
