import { createMiddleware } from 'hono/factory';
import { createRateLimiter, type LimitResult, type RateLimiter, type RatePolicy } from '#core/adapters/rate-limiter.ts';
import { DomainError } from '#core/errors.ts';
import type { Config } from '../config.ts';
import type { AppEnv } from '../context.ts';

/** The one route that spends model tokens, and so has a limit of its own on top of the general one. */
const QUESTION = /^\/query\/?$/;

const limiters = new WeakMap<Config, RateLimiter | null>();

/** Per isolate and settings; null without Redis settings, which turns rate limiting off. */
function limiterFor(config: Config): RateLimiter | null {
  let limiter = limiters.get(config);
  if (limiter === undefined) {
    limiter =
      config.UPSTASH_REDIS_REST_URL && config.UPSTASH_REDIS_REST_TOKEN
        ? createRateLimiter({
            url: config.UPSTASH_REDIS_REST_URL,
            token: config.UPSTASH_REDIS_REST_TOKEN,
            perMinute: { general: config.RATE_LIMIT_PER_MINUTE, query: config.QUERY_RATE_LIMIT_PER_MINUTE },
          })
        : null;
    limiters.set(config, limiter);
  }
  return limiter;
}

/**
 * Token buckets per API key, and per user for bearer tokens: the general limit on every request, and
 * the question limit on POST /query/ too. Every answer says where the caller stands, in the IETF draft's
 * fields (draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy: "general";q=120;w=60` and
 * `RateLimit: "general";r=119;t=1`. Past a limit: 429 `rate_limited` with `Retry-After`. When Redis
 * cannot be reached the request goes through, without those fields, and the failure is logged.
 */
export const rateLimit = createMiddleware<AppEnv>(async (c, next) => {
  const limiter = limiterFor(c.var.config);
  if (!limiter) return next();
  const caller = c.var.caller;
  const identity = caller.key ? `key:${caller.key.id}` : `user:${caller.id}`;
  const policies: RatePolicy[] = c.req.method === 'POST' && QUESTION.test(c.req.path) ? ['general', 'query'] : ['general'];
  const background = (work: Promise<unknown>) => c.executionCtx.waitUntil(work);
  const results = (await Promise.all(policies.map((policy) => limiter.take(policy, identity, background)))).filter(
    (result): result is LimitResult => result !== null,
  );
  if (results.length > 0) {
    c.header('RateLimit-Policy', results.map((r) => `"${r.policy}";q=${r.limit};w=60`).join(', '));
    c.header('RateLimit', results.map((r) => `"${r.policy}";r=${r.remaining};t=${r.resetSeconds}`).join(', '));
  }
  const refused = results.find((result) => !result.allowed);
  if (refused) {
    const what = refused.policy === 'query' ? 'questions' : 'requests';
    const message = `Too many ${what}: at most ${refused.limit} a minute; try again in ${refused.resetSeconds} s`;
    throw new DomainError('rate_limited', message, { retryAfter: refused.resetSeconds });
  }
  await next();
});
