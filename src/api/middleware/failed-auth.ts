import type { Context } from 'hono';
import { DomainError, type ErrorKind } from '#core/errors.ts';
import type { AppEnv } from '../context.ts';
import { addressBucket } from './client-address.ts';
import { limiterFor, rateLimited, reportLimits } from './rate-limit.ts';

/**
 * Credentials refused as not genuine: what guessing keys or forging tokens produces. An expired
 * token, or a revoked or expired key, was genuine once; a request with none guesses nothing.
 */
const GUESSES: ReadonlySet<ErrorKind> = new Set(['invalid_token', 'invalid_api_key']);

export interface FailedAuthLimit {
  /** After a credential is accepted: 429 while its address has no tries left. */
  admit(): Promise<void>;
  /** After a credential is refused: counts a guess against the address; 429 instead of the 401 once it has no tries left. */
  refused(error: unknown): Promise<void>;
}

/**
 * Failed authentications per client address (CF-Connecting-IP; see client-address.ts), so that
 * guessing keys or tokens goes at AUTH_FAILURE_RATE_LIMIT_PER_MINUTE at most. While an address has
 * no tries left, every request from it that carries a credential is 429, valid ones too: answering
 * those would tell the guess that worked from the ones that did not. Where the address stands is
 * asked of Redis when the request starts, beside the credential's check, so it adds no wait. Null
 * without Redis; if Redis fails, authentication goes on unlimited, as the other limits do.
 */
export function failedAuthLimit(c: Context<AppEnv>): FailedAuthLimit | null {
  const limiter = limiterFor(c.var.config);
  if (!limiter) return null;
  const identity = `address:${addressBucket(c.req.header('CF-Connecting-IP'))}`;
  const standing = limiter.peek('auth_failures', identity);
  return {
    async admit() {
      const now = await standing;
      if (now && !now.allowed) {
        reportLimits(c, [now]);
        throw rateLimited(now);
      }
    },
    async refused(error) {
      await standing;
      if (!(error instanceof DomainError) || !GUESSES.has(error.kind)) return;
      const counted = await limiter.take('auth_failures', identity, (work) => c.executionCtx.waitUntil(work));
      if (!counted) return;
      reportLimits(c, [counted]);
      if (!counted.allowed) throw rateLimited(counted);
    },
  };
}
