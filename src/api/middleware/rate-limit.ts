import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { DomainError } from '#core/errors.ts';
import type { Config } from '../config.ts';
import type { AppEnv } from '../context.ts';
import { createRateLimiter, type LimitResult, type RateLimiter, type RatePolicy } from './rate-limiter.ts';

/** The route that spends model tokens on an answer, and the one that spends an embedding on a search. */
const QUESTION = /^\/query\/?$/;
const SEARCH = /^\/query\/search\/?$/;

const limiters = new WeakMap<Config, RateLimiter | null>();

/** Per isolate and settings; null without Redis settings, which turns rate limiting off. */
export function limiterFor(config: Config): RateLimiter | null {
  let limiter = limiters.get(config);
  if (limiter === undefined) {
    limiter =
      config.UPSTASH_REDIS_REST_URL && config.UPSTASH_REDIS_REST_TOKEN
        ? createRateLimiter({
            url: config.UPSTASH_REDIS_REST_URL,
            token: config.UPSTASH_REDIS_REST_TOKEN,
            perMinute: {
              general: config.RATE_LIMIT_PER_MINUTE,
              query: config.QUERY_RATE_LIMIT_PER_MINUTE,
              search: config.SEARCH_RATE_LIMIT_PER_MINUTE,
              auth_failures: config.AUTH_FAILURE_RATE_LIMIT_PER_MINUTE,
            },
          })
        : null;
    limiters.set(config, limiter);
  }
  return limiter;
}

/** The limits a request counts against, besides the general one. */
function policiesOf(method: string, path: string): RatePolicy[] {
  if (method !== 'POST') return ['general'];
  if (QUESTION.test(path)) return ['general', 'query'];
  if (SEARCH.test(path)) return ['general', 'search'];
  return ['general'];
}

/** What each refusal calls what it counts. */
const COUNTED: Record<RatePolicy, string> = {
  general: 'requests',
  query: 'questions',
  search: 'searches',
  auth_failures: 'failed authentications from this address',
};

/** The IETF draft's fields for these buckets (draft-ietf-httpapi-ratelimit-headers). */
export function reportLimits(c: Context<AppEnv>, results: LimitResult[]) {
  if (results.length === 0) return;
  c.header('RateLimit-Policy', results.map((r) => `"${r.policy}";q=${r.limit};w=60`).join(', '));
  c.header('RateLimit', results.map((r) => `"${r.policy}";r=${r.remaining};t=${r.resetSeconds}`).join(', '));
}

/** 429 `rate_limited`, with `Retry-After` the seconds until the bucket has a token again. */
export function rateLimited(refused: LimitResult): DomainError {
  const message = `Too many ${COUNTED[refused.policy]}: at most ${refused.limit} a minute; try again in ${refused.resetSeconds} s`;
  return new DomainError('rate_limited', message, { retryAfter: refused.resetSeconds });
}

/**
 * Token buckets per person: every request counts against its owner, the user, whichever credential
 * carries it (their bearer token or any of their API keys), so that more keys never mean more requests.
 * The general limit on every request; the question limit on POST /query/ and the search limit on
 * POST /query/search too. Every answer says where the caller stands: `RateLimit-Policy:
 * "general";q=120;w=60` and `RateLimit: "general";r=119;t=1`. Past a limit: 429 `rate_limited` with
 * `Retry-After`. When Redis cannot be reached the request goes through, without those fields (the
 * limiter logs it, at most once a minute).
 */
export const rateLimit = createMiddleware<AppEnv>(async (c, next) => {
  const limiter = limiterFor(c.var.config);
  if (!limiter) return next();
  const identity = `user:${c.var.caller.id}`;
  const background = (work: Promise<unknown>) => c.executionCtx.waitUntil(work);
  const policies = policiesOf(c.req.method, c.req.path);
  const results = (await Promise.all(policies.map((policy) => limiter.take(policy, identity, background)))).filter(
    (result): result is LimitResult => result !== null,
  );
  reportLimits(c, results);
  const refused = results.find((result) => !result.allowed);
  if (refused) throw rateLimited(refused);
  await next();
});
