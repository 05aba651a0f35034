import { createMiddleware } from 'hono/factory';
import type { Scope } from '#core/caller.ts';
import { forbidden } from '#core/errors.ts';
import type { AppEnv } from '../context.ts';

/** Who may call a route: a bearer token only, or also an API key that holds this scope. */
export type RouteAccess = Scope | 'bearer';

/**
 * A route's own credential rule, after authentication: a key outside the route's scope, or on a
 * bearer-only route (keys, webhooks, sharing, membership, administration), is 403. A bearer token
 * passes; what its user may do is the services' to decide, as it is for a key's owner.
 */
export const requireAccess = (access: RouteAccess) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const key = c.var.caller.key;
    if (key && access === 'bearer') throw forbidden('API keys cannot do this; use a bearer token');
    if (key && access !== 'bearer' && !key.scopes.includes(access)) {
      throw forbidden(`This API key does not have the ${access} scope`);
    }
    await next();
  });

/** The sentence each operation's description ends with, and what its OpenAPI `security` lists. */
export function describeAccess(access: RouteAccess): { note: string; security: Record<string, string[]>[] } {
  return access === 'bearer'
    ? { note: '**Credentials:** a bearer token only; an API key gets 403.', security: [{ bearerAuth: [] }] }
    : {
        note: `**Credentials:** a bearer token, or an API key with the \`${access}\` scope.`,
        security: [{ bearerAuth: [] }, { apiKey: [access] }],
      };
}
