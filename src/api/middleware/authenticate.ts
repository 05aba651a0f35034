import { createMiddleware } from 'hono/factory';
import { DomainError } from '#core/errors.ts';
import { verifyAccessToken } from '../auth/verify-token.ts';
import type { AppEnv } from '../context.ts';

const BEARER = /^Bearer +([A-Za-z0-9\-_.=]+)$/i;

/**
 * Sets `caller` from the bearer token or the `X-API-Key`, or refuses with the contract's 401 messages;
 * 503 when the identity provider's keys cannot be had (see auth/jwks-cache.ts). Both credentials at
 * once is a 401 too: which one was meant is not ours to guess.
 */
export const authenticate = createMiddleware<AppEnv>(async (c, next) => {
  const config = c.var.config;
  const authorization = c.req.header('Authorization');
  const apiKey = c.req.header('X-API-Key');
  if (apiKey !== undefined && authorization !== undefined) {
    throw new DomainError('ambiguous_credentials', 'Send either a bearer token or an API key, not both');
  }
  if (apiKey !== undefined) {
    c.set('caller', await c.var.services.apiKeys.authenticate(apiKey.trim(), (work) => c.executionCtx.waitUntil(work)));
    return next();
  }
  const match = BEARER.exec(authorization?.trim() ?? '');
  if (!match?.[1]) throw new DomainError('unauthenticated', 'Not authenticated');
  c.set(
    'caller',
    await verifyAccessToken(match[1], {
      jwksUrl: config.AUTH_JWKS_URL,
      jwks: {
        refreshSeconds: config.AUTH_JWKS_REFRESH_SECONDS,
        maxStaleSeconds: config.AUTH_JWKS_MAX_STALE_SECONDS,
        cooldownSeconds: config.AUTH_JWKS_COOLDOWN_SECONDS,
      },
      issuer: config.AUTH_ISSUER,
      clockToleranceSeconds: config.AUTH_CLOCK_TOLERANCE_SECONDS,
      background: (work) => c.executionCtx.waitUntil(work),
    }),
  );
  await next();
});
