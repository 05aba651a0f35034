import { createRoute, type RouteConfig } from '@hono/zod-openapi';
import type { ErrorStatus } from '../errors.ts';
import { declareRate, type RouteRate } from '../middleware/rate-limit.ts';
import { describeAccess, type RouteAccess, requireAccess } from '../middleware/require-access.ts';
import { authErrors, errorResponses } from '../schemas/error.ts';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * A route besides its method, path and summary: its operationId (the typed client's method name),
 * who may call it (`access`), which rate limits it counts against (`rate`; the general one alone when
 * not given), description, request, success response, and `errors`, the statuses it may answer beyond
 * those every authenticated route can give.
 */
type RouteSpec = Omit<RouteConfig, 'method' | 'path' | 'tags' | 'summary' | 'operationId' | 'security' | 'middleware'> & {
  operationId: string;
  access: RouteAccess;
  rate?: RouteRate;
  errors?: readonly ErrorStatus[];
};

/**
 * The authenticated routes of one tag, defined as `route.get(path, summary, spec)` so that each
 * definition says only what is its own: the tag, the credential rule (enforced and described), the
 * rate limits and the error responses are filled in here. `shared.errors` serves every route of the
 * tag that does not list its own.
 */
export function taggedRoutes(tag: string, shared: { errors?: readonly ErrorStatus[] } = {}) {
  const define =
    <M extends Method>(method: M) =>
    <P extends string, S extends RouteSpec>(
      path: P,
      summary: string,
      { errors = shared.errors ?? [], responses, access, rate = 'general', description, ...spec }: S,
    ) => {
      const { note, security } = describeAccess(access);
      return createRoute({
        ...spec,
        method,
        path,
        tags: [tag],
        summary,
        description: description ? `${description}\n\n${note}` : note,
        security,
        middleware: declareRate(requireAccess(access), rate),
        // Destructuring widens `responses` to the constraint; the handlers' types need the route's own.
        responses: { ...(responses as S['responses']), ...errorResponses(...authErrors, ...errors) },
      });
    };
  return { get: define('get'), post: define('post'), put: define('put'), patch: define('patch'), delete: define('delete') };
}
