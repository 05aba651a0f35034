import type { Context, MiddlewareHandler } from 'hono';
import { createMiddleware } from 'hono/factory';
import { matchedRoutes } from 'hono/route';
import { DomainError } from '#core/errors.ts';
import type { Config } from '../config.ts';
import type { AppEnv } from '../context.ts';
import { createRateLimiter, type LimitResult, type RateLimiter, type RatePolicy } from './rate-limiter.ts';

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

/**
 * The limits a route counts against, declared on the route beside its access (routes/define-route.ts):
 * every route the general one; the route that spends model tokens on an answer (POST /query/) the
 * question limit too, and the one that spends an embedding on a search (POST /query/search) the search
 * limit too.
 */
export type RouteRate = 'general' | 'query' | 'search';

const POLICIES: Record<RouteRate, RatePolicy[]> = {
  general: ['general'],
  query: ['general', 'query'],
  search: ['general', 'search'],
};

/** Each route's own middleware, with the rate its route declared. */
const declaredRates = new WeakMap<MiddlewareHandler, RouteRate>();

/**
 * Marks a route's own middleware (the one define-route.ts installs) with the route's rate. The limits
 * are taken before the route's own middleware runs, so rateLimit finds the rate of the route the request
 * reached among the request's matched handlers.
 */
export function declareRate<H extends MiddlewareHandler>(handler: H, rate: RouteRate): H {
  declaredRates.set(handler, rate);
  return handler;
}

/** The limits of the route the request reached; the general one alone for a path no route serves. */
function policiesOf(c: Context<AppEnv>): RatePolicy[] {
  for (const { handler } of matchedRoutes(c)) {
    const rate = declaredRates.get(handler as MiddlewareHandler);
    if (rate) return POLICIES[rate];
  }
  return POLICIES.general;
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
 * The general limit on every request, and the limits its route declares (`rate`, see RouteRate).
 * Every answer says where the caller stands: `RateLimit-Policy: "general";q=120;w=60` and
 * `RateLimit: "general";r=119;t=1`. Past a limit: 429 `rate_limited` with
 * `Retry-After`. When Redis cannot be reached the request goes through, without those fields (the
 * limiter logs it, at most once a minute).
 */
export const rateLimit = createMiddleware<AppEnv>(async (c, next) => {
  const limiter = limiterFor(c.var.config);
  if (!limiter) return next();
  const identity = `user:${c.var.caller.id}`;
  const background = (work: Promise<unknown>) => c.executionCtx.waitUntil(work);
  const policies = policiesOf(c);
  const results = (await Promise.all(policies.map((policy) => limiter.take(policy, identity, background)))).filter(
    (result): result is LimitResult => result !== null,
  );
  reportLimits(c, results);
  const refused = results.find((result) => !result.allowed);
  if (refused) throw rateLimited(refused);
  await next();
});
