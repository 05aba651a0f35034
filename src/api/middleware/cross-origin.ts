import { cors } from 'hono/cors';
import { createMiddleware } from 'hono/factory';
import { forbidden } from '#core/errors.ts';
import { loadConfig } from '../config.ts';
import type { AppEnv } from '../context.ts';

/**
 * CORS for the origins in CORS_ORIGINS, before authentication: a browser's preflight carries no
 * token. The app's own pages are same-origin and need none of it. A preflight from any other
 * origin is refused with 403, so the reason shows in the browser's network panel.
 */
const allowedCors = cors({
  origin: (origin, c) => (loadConfig(c.env).CORS_ORIGINS.includes(origin) ? origin : null),
  allowHeaders: ['Authorization', 'X-API-Key', 'Content-Type'],
  // Read by clients: the id to quote in a report, how long to wait after a 503 or 429, and where the rate limits stand.
  exposeHeaders: ['X-Request-Id', 'Retry-After', 'RateLimit', 'RateLimit-Policy'],
  maxAge: 600,
});

export const crossOrigin = createMiddleware<AppEnv>(async (c, next) => {
  const origin = c.req.header('Origin');
  // Programs send no Origin: nothing to do, and /health stays up on a misconfigured deployment.
  if (!origin) return next();
  if (c.req.method === 'OPTIONS' && !loadConfig(c.env).CORS_ORIGINS.includes(origin)) {
    throw forbidden('This origin may not call the API from a browser: it is not in CORS_ORIGINS');
  }
  return allowedCors(c, next);
});
