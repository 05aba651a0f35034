import { Ratelimit } from '@upstash/ratelimit';
import { Redis } from '@upstash/redis/cloudflare';

/** The limits the API keeps: every request, and questions (POST /query/), which spend model tokens. */
export type RatePolicy = 'general' | 'query';

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
}

/** Redis is asked for at most this long per request before the request goes through unlimited. */
const TIMEOUT_MS = 1000;

/**
 * Token buckets on Upstash Redis (@upstash/ratelimit): a bucket of `perMinute` requests that refills one
 * request every 60/perMinute seconds, so a client may burst up to a minute's worth and then goes at the
 * steady rate. Limiters hold no connection (Redis is HTTP), so one per isolate and settings is reused.
 */
export function createRateLimiter(settings: RateLimitSettings): RateLimiter {
  const redis = new Redis({ url: settings.url, token: settings.token, retry: false }, { UPSTASH_DISABLE_TELEMETRY: '1' });
  const limiters = Object.fromEntries(
    (Object.entries(settings.perMinute) as [RatePolicy, number][]).map(([policy, perMinute]) => [
      policy,
      new Ratelimit({
        redis,
        prefix: `rag-ratelimit:${policy}`,
        limiter: Ratelimit.tokenBucket(1, `${Math.max(1, Math.round(60_000 / perMinute))} ms`, perMinute),
        timeout: TIMEOUT_MS,
        analytics: false,
      }),
    ]),
  ) as Record<RatePolicy, Ratelimit>;

  return {
    async take(policy, identity, background) {
      try {
        const result = await limiters[policy].limit(identity);
        background(result.pending);
        if (result.reason === 'timeout') {
          console.error(`rate limit (${policy}): Redis did not answer within ${TIMEOUT_MS} ms; the request goes through`);
          return null;
        }
        return {
          policy,
          allowed: result.success,
          limit: result.limit,
          remaining: Math.max(0, result.remaining),
          resetSeconds: Math.max(1, Math.ceil((result.reset - Date.now()) / 1000)),
        };
      } catch (error) {
        console.error(`rate limit (${policy}): Redis failed; the request goes through:`, error);
        return null;
      }
    },
  };
}
