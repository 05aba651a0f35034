import { connect } from '#core/db/client.ts';
import { countDeadLetters } from '#core/qstash/dead-letters.ts';
import { type Config, ConfigSchema } from '../config.ts';

/** Each check's time limit: a dependency slower than this is as good as down for a request. */
export const CHECK_TIMEOUT_MS = 2_000;

export type CheckName = 'config' | 'database' | 'jwks' | 'qstash' | 'vector' | 'redis' | 'chat' | 'embeddings';

/**
 * Why a check failed, in our words only: never an upstream's reply, a host or a setting's value.
 * `timeout`: no answer within CHECK_TIMEOUT_MS; `unreachable`: no connection; `unauthorized`: the
 * service refused our credentials (401, 403); `not_found`: 404 (a model the provider does not know);
 * `unavailable`: any other error status; `invalid`: an answer that is not what the service sends;
 * `misconfigured`: the settings did not validate (`settings` names them).
 */
export type FailureReason =
  | 'timeout'
  | 'unreachable'
  | 'unauthorized'
  | 'not_found'
  | 'unavailable'
  | 'invalid'
  | 'misconfigured';

export type CheckResult =
  | { status: 'ok'; latency_ms: number; dead_letters?: number; dead_letters_more?: boolean }
  | { status: 'failing'; latency_ms: number; reason: FailureReason; http_status?: number; settings?: string[] }
  | { status: 'skipped'; latency_ms: 0; reason: 'not_configured' | 'config_failing' };

export interface Readiness {
  status: 'ready' | 'failing';
  checks: Record<CheckName, CheckResult>;
  /** The checks that failed, by name; empty when ready. */
  failing: CheckName[];
}

/** A failure whose reason the check knows (an HTTP status), as opposed to a thrown network error. */
class CheckFailed extends Error {
  constructor(
    readonly reason: FailureReason,
    readonly httpStatus?: number,
  ) {
    super(reason);
  }
}

type Probe = (signal: AbortSignal) => Promise<Partial<Extract<CheckResult, { status: 'ok' }>> | undefined>;

/**
 * Every dependency of the API, checked at once, each within CHECK_TIMEOUT_MS: the settings validate;
 * the database answers a query; the identity provider's JWKS serves keys; QStash lists its dead-letter
 * queue (whose size is reported); the vector index answers `info`; Redis answers PING (when configured);
 * the chat model and the embedding model (when configured) are known to their provider (`GET /models/{model}`,
 * which spends no tokens). `env` is the worker's raw environment: its settings are validated here.
 */
export async function checkReadiness(env: object): Promise<Readiness> {
  const parsed = ConfigSchema.safeParse(env);
  if (!parsed.success) {
    const settings = [...new Set(parsed.error.issues.map((issue) => String(issue.path[0] ?? '?')))];
    const skipped: CheckResult = { status: 'skipped', latency_ms: 0, reason: 'config_failing' };
    return summarize({
      config: { status: 'failing', latency_ms: 0, reason: 'misconfigured', settings },
      database: skipped,
      jwks: skipped,
      qstash: skipped,
      vector: skipped,
      redis: skipped,
      chat: skipped,
      embeddings: skipped,
    });
  }
  const config = parsed.data;
  const probes = probesFor(config);
  const names = Object.keys(probes) as Exclude<CheckName, 'config'>[];
  const results = await Promise.all(names.map((name) => run(probes[name])));
  return summarize({
    config: { status: 'ok', latency_ms: 0 },
    ...(Object.fromEntries(names.map((name, i) => [name, results[i]])) as Record<Exclude<CheckName, 'config'>, CheckResult>),
  });
}

function summarize(checks: Record<CheckName, CheckResult>): Readiness {
  const failing = (Object.keys(checks) as CheckName[]).filter((name) => checks[name].status === 'failing');
  return { status: failing.length === 0 ? 'ready' : 'failing', checks, failing };
}

async function run(probe: Probe | null): Promise<CheckResult> {
  if (!probe) return { status: 'skipped', latency_ms: 0, reason: 'not_configured' };
  const started = Date.now();
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | null = null;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve('timeout');
    }, CHECK_TIMEOUT_MS);
  });
  try {
    const outcome = await Promise.race([probe(controller.signal), timedOut]);
    const latency_ms = Date.now() - started;
    if (outcome === 'timeout') return { status: 'failing', latency_ms, reason: 'timeout' };
    return { status: 'ok', latency_ms, ...outcome };
  } catch (error) {
    const latency_ms = Date.now() - started;
    if (controller.signal.aborted) return { status: 'failing', latency_ms, reason: 'timeout' };
    if (error instanceof CheckFailed) {
      return {
        status: 'failing',
        latency_ms,
        reason: error.reason,
        ...(error.httpStatus === undefined ? {} : { http_status: error.httpStatus }),
      };
    }
    return { status: 'failing', latency_ms, reason: 'unreachable' };
  } finally {
    if (timer !== null) clearTimeout(timer);
  }
}

function probesFor(config: Config): Record<Exclude<CheckName, 'config'>, Probe | null> {
  const embeddingModel = config.EMBEDDING_MODEL;
  return {
    database: async () => {
      const sql = connect(config.HYPERDRIVE.connectionString);
      try {
        await sql`select 1`;
      } finally {
        // Not awaited: a connection that hangs must not hold the answer past its timeout.
        void sql.end({ timeout: 1 }).catch(() => {});
      }
      return undefined;
    },
    jwks: async (signal) => {
      const body = await getJson(config.AUTH_JWKS_URL, {}, signal);
      const keys = (body as { keys?: unknown } | null)?.keys;
      if (!Array.isArray(keys) || keys.length === 0) throw new CheckFailed('invalid');
      return undefined;
    },
    qstash: config.QSTASH_TOKEN
      ? async (signal) => {
          const token = config.QSTASH_TOKEN as string;
          try {
            const { count, more } = await countDeadLetters({ url: config.QSTASH_URL, token }, { signal });
            return { dead_letters: count, dead_letters_more: more };
          } catch (error) {
            const status = /HTTP (\d{3})/.exec(error instanceof Error ? error.message : '')?.[1];
            if (status) throw statusFailure(Number(status));
            throw error;
          }
        }
      : null,
    vector: async (signal) => {
      await getJson(`${trimSlash(config.UPSTASH_VECTOR_REST_URL)}/info`, bearer(config.UPSTASH_VECTOR_REST_TOKEN), signal);
      return undefined;
    },
    redis:
      config.UPSTASH_REDIS_REST_URL && config.UPSTASH_REDIS_REST_TOKEN
        ? async (signal) => {
            const response = await fetch(trimSlash(config.UPSTASH_REDIS_REST_URL as string), {
              method: 'POST',
              headers: { ...bearer(config.UPSTASH_REDIS_REST_TOKEN as string), 'content-type': 'application/json' },
              body: JSON.stringify(['PING']),
              signal,
            });
            const body = await readJson(response);
            if ((body as { result?: unknown } | null)?.result !== 'PONG') throw new CheckFailed('invalid');
            return undefined;
          }
        : null,
    chat: modelProbe(config, 'CHAT', config.CHAT_MODEL),
    embeddings: embeddingModel ? modelProbe(config, 'EMBEDDING', embeddingModel) : null,
  };
}

/** `GET {base}/models/{model}` on the role's provider, with its key: the model is there and the key is taken. */
function modelProbe(config: Config, role: 'CHAT' | 'EMBEDDING', model: string): Probe {
  const base = trimSlash(config[`${role}_BASE_URL`] ?? config.OPENAI_BASE_URL ?? 'https://api.openai.com/v1');
  const key = config[`${role}_API_KEY`] ?? config.OPENAI_API_KEY;
  return async (signal) => {
    await getJson(`${base}/models/${model}`, bearer(key), signal);
    return undefined;
  };
}

async function getJson(url: string, headers: Record<string, string>, signal: AbortSignal): Promise<unknown> {
  return readJson(await fetch(url, { headers, signal }));
}

/** The body of a 2xx answer as JSON; any other status is a CheckFailed naming it, the body unread. */
async function readJson(response: Response): Promise<unknown> {
  if (!response.ok) {
    await response.body?.cancel();
    throw statusFailure(response.status);
  }
  try {
    return await response.json();
  } catch {
    throw new CheckFailed('invalid', response.status);
  }
}

function statusFailure(status: number): CheckFailed {
  const reason = status === 401 || status === 403 ? 'unauthorized' : status === 404 ? 'not_found' : 'unavailable';
  return new CheckFailed(reason, status);
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const trimSlash = (url: string) => url.replace(/\/+$/, '');
