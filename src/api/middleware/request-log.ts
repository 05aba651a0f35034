import { createMiddleware } from 'hono/factory';
import { routePath } from 'hono/route';
import { isUuid } from '#core/db/client.ts';
import { createLogger, secretsOf } from '#core/log.ts';
import type { AppEnv } from '../context.ts';

/**
 * The request's logger (its id, later its user), and one `request` line when it is answered: the
 * route's pattern rather than its path (a share link's path is its token), the status, the time to the
 * response's head, and who asked. The settings' secrets are blanked in every line it writes.
 */
export const requestLog = createMiddleware<AppEnv>(async (c, next) => {
  const started = Date.now();
  c.set('log', createLogger({ worker: 'api', request_id: c.var.requestId }, { secrets: secretsOf(c.env ?? {}) }));
  await next();
  const caller = c.var.caller;
  const route = routePath(c, -1);
  c.var.log.info('request', {
    method: c.req.method,
    route,
    collection_id: collectionOf(c.req.param() as Record<string, string | undefined>, route, c.req.query('collection_id')),
    status: c.res.status,
    ms: Date.now() - started,
    user_id: caller?.id,
    api_key_id: caller?.key?.id,
  });
});

/** The collection a request names, in its path or its query (an upload's), when it is shaped like an id. */
function collectionOf(params: Record<string, string | undefined>, route: string, query: string | undefined) {
  const named = params.collection_id ?? (route.startsWith('/collections/:id') ? params.id : undefined) ?? query;
  return named && isUuid(named) ? named : undefined;
}
