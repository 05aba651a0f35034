import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { Caller } from '#core/caller.ts';
import { DomainError } from '#core/errors.ts';
import { verifyAccessToken } from '../auth/verify-token.ts';
import type { AppEnv } from '../context.ts';
import { failedAuthLimit } from './failed-auth.ts';

const BEARER = /^Bearer +([A-Za-z0-9\-_.=]+)$/i;

/**
 * Sets `caller` from the bearer token or the `X-API-Key`, or refuses with the contract's 401 messages;
 * 503 when the identity provider's keys cannot be had (see auth/jwks-cache.ts). Both credentials at
 * once is a 401 too: which one was meant is not ours to guess. Refused credentials count against the
 * client's address (failed-auth.ts), and past that limit the answer is 429.
 */
export const authenticate = createMiddleware<AppEnv>(async (c, next) => {
  const failures = failedAuthLimit(c);
  let caller: Caller;
  try {
    caller = await identify(c);
  } catch (error) {
    await failures?.refused(error);
    throw error;
  }
  await failures?.admit();
  c.set('caller', caller);
  await next();
});

async function identify(c: Context<AppEnv>): Promise<Caller> {
  const config = c.var.config;
  const authorization = c.req.header('Authorization');
  const apiKey = c.req.header('X-API-Key');
  if (apiKey !== undefined && authorization !== undefined) {
    throw new DomainError('ambiguous_credentials', 'Send either a bearer token or an API key, not both');
  }
  const background = (work: Promise<unknown>) => c.executionCtx.waitUntil(work);
  if (apiKey !== undefined) return c.var.services.apiKeys.authenticate(apiKey.trim(), background);
  const match = BEARER.exec(authorization?.trim() ?? '');
  if (!match?.[1]) throw new DomainError('unauthenticated', 'Not authenticated');
  return verifyAccessToken(match[1], {
    jwksUrl: config.AUTH_JWKS_URL,
    jwks: {
      refreshSeconds: config.AUTH_JWKS_REFRESH_SECONDS,
      maxStaleSeconds: config.AUTH_JWKS_MAX_STALE_SECONDS,
      cooldownSeconds: config.AUTH_JWKS_COOLDOWN_SECONDS,
    },
    issuer: config.AUTH_ISSUER,
    allowAnonymous: config.AUTH_ALLOW_ANONYMOUS,
    clockToleranceSeconds: config.AUTH_CLOCK_TOLERANCE_SECONDS,
    background,
  });
}
