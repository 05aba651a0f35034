import { Ratelimit } from '@upstash/ratelimit';
import { Redis } from '@upstash/redis/cloudflare';
import { logUnowned } from '#core/log.ts';

/**
 * The limits the API keeps: every request; questions (POST /query/), which spend model tokens; searches
 * (POST /query/search), which spend an embedding each; and failed authentications per client address.
 */
export type RatePolicy = 'general' | 'query' | 'search' | 'auth_failures';

export interface RateLimitSettings {
  url: string;
  token: string;
  perMinute: Record<RatePolicy, number>;
}

export interface LimitResult {
  policy: RatePolicy;
  allowed: boolean;
  /** The bucket's size: requests per minute. */
  limit: number;
  remaining: number;
  /** Seconds until the next request is admitted again (a token is back), at least 1. */
  resetSeconds: number;
}

export interface RateLimiter {
  /**
   * Takes one request from `identity`'s bucket. Null when Redis did not answer in time or failed: the
   * caller lets the request through (a limit is protection, not a reason to be down).
   */
  take(policy: RatePolicy, identity: string, background: (work: Promise<unknown>) => void): Promise<LimitResult | null>;
  /** Where `identity`'s bucket stands, taking nothing: `allowed` is false while it is empty. Null as for take(). */
  peek(policy: RatePolicy, identity: string): Promise<LimitResult | null>;
}

/** Redis is asked for at most this long per request before the request goes through unlimited. */
const TIMEOUT_MS = 1000;
/** While Redis fails, one log line per this long at most, with the count of failures since the last. */
const FAIL_OPEN_LOG_INTERVAL_MS = 60_000;

/**
 * Token buckets on Upstash Redis (@upstash/ratelimit): a bucket of `perMinute` requests that refills one
 * request every 60/perMinute seconds, so a client may burst up to a minute's worth and then goes at the
 * steady rate. Limiters hold no connection (Redis is HTTP), so one per isolate and settings is reused.
 */
export function createRateLimiter(settings: RateLimitSettings): RateLimiter {
  const redis = new Redis({ url: settings.url, token: settings.token, retry: false }, { UPSTASH_DISABLE_TELEMETRY: '1' });
  const refillMs = (perMinute: number) => Math.max(1, Math.round(60_000 / perMinute));
  const limiters = Object.fromEntries(
    (Object.entries(settings.perMinute) as [RatePolicy, number][]).map(([policy, perMinute]) => [
      policy,
      new Ratelimit({
        redis,
        prefix: `rag-ratelimit:${policy}`,
        limiter: Ratelimit.tokenBucket(1, `${refillMs(perMinute)} ms`, perMinute),
        timeout: TIMEOUT_MS,
        analytics: false,
      }),
    ]),
  ) as Record<RatePolicy, Ratelimit>;
  const failOpen = failOpenLog(new URL(settings.url).host);

  return {
    async take(policy, identity, background) {
      try {
        const result = await limiters[policy].limit(identity);
        background(result.pending);
        if (result.reason === 'timeout') {
          failOpen(policy, `did not answer within ${TIMEOUT_MS} ms`);
          return null;
        }
        return {
          policy,
          allowed: result.success,
          limit: result.limit,
          remaining: Math.max(0, result.remaining),
          resetSeconds: secondsUntil(result.reset),
        };
      } catch (error) {
        failOpen(policy, `failed (${reasonOf(error)})`);
        return null;
      }
    },

    async peek(policy, identity) {
      try {
        const standing = await withTimeout(limiters[policy].getRemaining(identity));
        if (!standing) {
          failOpen(policy, `did not answer within ${TIMEOUT_MS} ms`);
          return null;
        }
        // The bucket as last written: `reset` is when its next token comes, which may already have passed.
        const refilled = standing.reset <= Date.now();
        return {
          policy,
          allowed: refilled || standing.remaining >= 1,
          limit: standing.limit,
          remaining: refilled ? Math.max(1, standing.remaining) : standing.remaining,
          resetSeconds: secondsUntil(standing.reset),
        };
      } catch (error) {
        failOpen(policy, `failed (${reasonOf(error)})`);
        return null;
      }
    },
  };
}

const secondsUntil = (at: number) => Math.max(1, Math.ceil((at - Date.now()) / 1000));

async function withTimeout<T>(work: Promise<T>): Promise<T | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), TIMEOUT_MS);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

/** The error's own message only: Upstash's errors can quote the request, and the request holds the token. */
const reasonOf = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 200);

/**
 * Fail-open is a choice, so it is said plainly: the first failure at once, then at most one line a
 * minute per isolate, with how many failures it stands for. A Redis outage under load would
 * otherwise write a line per request.
 */
function failOpenLog(host: string) {
  let loggedAt = Number.NEGATIVE_INFINITY;
  let unlogged = 0;
  return (policy: RatePolicy, what: string) => {
    const now = Date.now();
    if (now - loggedAt < FAIL_OPEN_LOG_INTERVAL_MS) {
      unlogged += 1;
      return;
    }
    const since = unlogged > 0 ? `; ${unlogged} more since the last such line` : '';
    logUnowned('error', 'rate_limits_off', {
      worker: 'api',
      message: `RATE LIMITS OFF: Redis at ${host} ${what} (${policy}); requests go through unlimited until it answers${since}`,
    });
    loggedAt = now;
    unlogged = 0;
  };
}
