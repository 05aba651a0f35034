import { createRoute, type RouteConfig } from '@hono/zod-openapi';
import type { ErrorStatus } from '../errors.ts';
import { authErrors, errorResponses } from '../schemas/error.ts';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** A route's own part: its words, request and success response, and the errors it adds to those of every authenticated route. */
type RouteSpec = Omit<RouteConfig, 'method' | 'path' | 'tags'> & { errors?: readonly ErrorStatus[] };

/**
 * Defines the authenticated routes of one tag, `route.get(path, spec)` and the like, so that a
 * definition says only what is its own; the tag and the error responses are filled in here.
 */
export function taggedRoutes(tag: string) {
  const define =
    <M extends Method>(method: M) =>
    <P extends string, S extends RouteSpec>(path: P, { errors = [], responses, ...spec }: S) =>
      createRoute({
        ...spec,
        method,
        path,
        tags: [tag],
        responses: { ...(responses as S['responses']), ...errorResponses(...authErrors, ...errors) },
      });
  return { get: define('get'), post: define('post'), put: define('put'), patch: define('patch'), delete: define('delete') };
}
