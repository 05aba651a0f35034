import { createMiddleware } from 'hono/factory';
import { DomainError, forbidden } from '#core/errors.ts';
import type { AppEnv } from '../context.ts';
import { authenticate } from './authenticate.ts';
import { provideServices } from './services.ts';

const BEARER = /^Bearer +(\S+)$/i;

/**
 * Who may read `/ready`. With READY_TOKEN set, exactly that bearer token (a monitor's, not a user's),
 * and the check needs nothing else of the settings, so that a broken configuration can still be
 * reported. Without it, an administrator's bearer token, verified as on every other route (so it needs
 * the identity settings to be valid); an API key never, whoever holds it.
 */
export const readyAccess = createMiddleware<AppEnv>(async (c, next) => {
  const readyToken = (c.env as { READY_TOKEN?: unknown } | undefined)?.READY_TOKEN;
  if (typeof readyToken === 'string' && readyToken.trim() !== '') {
    const presented = BEARER.exec(c.req.header('Authorization')?.trim() ?? '')?.[1];
    if (!presented) throw new DomainError('unauthenticated', 'Not authenticated');
    if (!(await sameSecret(presented, readyToken.trim()))) throw new DomainError('invalid_token', 'Invalid token');
    return next();
  }
  await provideServices(c, async () => {
    await authenticate(c, async () => {
      if (c.var.caller.key) throw forbidden('API keys cannot do this; use a bearer token');
      if (!c.var.caller.isAdmin) throw forbidden('Only an administrator may read the readiness checks');
      await next();
    });
  });
});

/** Compared as SHA-256 digests, in time that does not depend on where they differ. */
async function sameSecret(presented: string, expected: string): Promise<boolean> {
  const digest = async (value: string) => new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(value)));
  const [a, b] = await Promise.all([digest(presented), digest(expected)]);
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= (a[i] as number) ^ (b[i] as number);
  return difference === 0;
}
