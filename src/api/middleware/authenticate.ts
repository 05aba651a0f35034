import { createMiddleware } from 'hono/factory';
import { DomainError } from '#core/errors.ts';
import { verifyAccessToken } from '../auth/verify-token.ts';
import { loadConfig } from '../config.ts';
import type { AppEnv } from '../context.ts';

const BEARER = /^Bearer +([A-Za-z0-9\-_.=]+)$/i;

/**
 * Sets `caller` from the bearer token, or refuses with the contract's 401 messages; 503 when the
 * identity provider's keys cannot be had (see auth/jwks-cache.ts).
 */
export const authenticate = createMiddleware<AppEnv>(async (c, next) => {
  const config = loadConfig(c.env);
  c.set('config', config);
  const match = BEARER.exec(c.req.header('Authorization')?.trim() ?? '');
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
