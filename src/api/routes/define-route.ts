import { createRoute, type RouteConfig } from '@hono/zod-openapi';
import type { ErrorStatus } from '../errors.ts';
import { authErrors, errorResponses } from '../schemas/error.ts';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * A route besides its method, path and summary: description, request, success response, and
 * `errors`, the statuses it may answer beyond those every authenticated route can give.
 */
type RouteSpec = Omit<RouteConfig, 'method' | 'path' | 'tags' | 'summary'> & { errors?: readonly ErrorStatus[] };

/**
 * The authenticated routes of one tag, defined as `route.get(path, summary, spec)` so that each
 * definition says only what is its own: the tag and the error responses are filled in here.
 * `shared.errors` serves every route of the tag that does not list its own.
 */
export function taggedRoutes(tag: string, shared: { errors?: readonly ErrorStatus[] } = {}) {
  const define =
    <M extends Method>(method: M) =>
    <P extends string, S extends RouteSpec>(path: P, summary: string, { errors = shared.errors ?? [], responses, ...spec }: S) =>
      createRoute({
        ...spec,
        method,
        path,
        tags: [tag],
        summary,
        // Destructuring widens `responses` to the constraint; the handlers' types need the route's own.
        responses: { ...(responses as S['responses']), ...errorResponses(...authErrors, ...errors) },
      });
  return { get: define('get'), post: define('post'), put: define('put'), patch: define('patch'), delete: define('delete') };
}
