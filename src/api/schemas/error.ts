import { z } from '@hono/zod-openapi';
import { ErrorCode, type ErrorStatus } from '../errors.ts';

export const ValidationIssueSchema = z.object({
  loc: z.array(z.union([z.string(), z.number()])).openapi({ example: ['body', 'name'] }),
  msg: z.string().openapi({ example: 'String must contain at least 1 character(s)' }),
  type: z.string().openapi({ example: 'too_small' }),
});

export const ErrorSchema = z
  .object({
    detail: z.union([z.string(), z.array(ValidationIssueSchema)]).openapi({
      description: 'A message for people; for 422 a list of `{loc, msg, type}`, one per failed field.',
      example: 'Collection not found',
    }),
    code: ErrorCode.openapi({ description: 'Stable machine-readable code.' }),
    request_id: z.string().openapi({ description: 'Also sent as the X-Request-Id header.' }),
  })
  .openapi('Error');

const DESCRIPTIONS: Record<ErrorStatus, string> = {
  401:
    'Missing, malformed, invalid or expired credentials. A bearer token: `Not authenticated` (`unauthenticated`), ' +
    '`Invalid token` (`invalid_token`), `Token expired` (`token_expired`). An API key: `Invalid API key` ' +
    '(`invalid_api_key`), `API key revoked` (`api_key_revoked`), `API key expired` (`api_key_expired`). Both at once: ' +
    '`Send either a bearer token or an API key, not both` (`ambiguous_credentials`).',
  403:
    'Authenticated, but not allowed: not the owner, not a member, needs admin, or needs ingest permission; or an API ' +
    'key without the scope the operation needs, restricted to another collection, or used where only a bearer token may be; ' +
    'or a token from an anonymous sign-in, which the deployment does not admit.',
  404: 'The resource does not exist, or is not visible to the caller.',
  409: 'The request conflicts with the resource’s state (a job that has already ended, a document being replaced).',
  413: 'The upload exceeds 50 MB.',
  415: 'Unsupported file type.',
  422: 'The request failed validation; `detail` lists each problem.',
  429:
    'Too many requests (`rate_limited`; see the `RateLimit` headers), counted per user whichever token or key ' +
    'carries them; too many refused credentials from the client’s address (`rate_limited`, every credential from it ' +
    'until a try is back); or the daily ingestion quota is used up (`quota_exceeded`). `Retry-After` gives the seconds to wait.',
  500: 'Unexpected failure, or the service is misconfigured.',
  502: 'An upstream service failed.',
  503: 'A dependency (identity provider, queue) is unavailable.',
};

/** Declares the shared error responses of a route, so the OpenAPI description lists them. */
export function errorResponses<const S extends ErrorStatus>(...statuses: S[]) {
  return Object.fromEntries(
    [...statuses, 500 as const].map((status) => [
      status,
      { description: DESCRIPTIONS[status], content: { 'application/json': { schema: ErrorSchema } } },
    ]),
  ) as Record<S | 500, { description: string; content: { 'application/json': { schema: typeof ErrorSchema } } }>;
}

/** Responses every authenticated route can give: 403 for an API key outside its scope, 429 past the rate limit. */
export const authErrors = [401, 403, 422, 429, 503] as const;

/** What a route on one collection adds: the caller may not use it, or it is not there. */
export const collectionErrors = [403, 404] as const;
