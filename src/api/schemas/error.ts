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
  401: 'Missing, malformed, invalid or expired bearer token (`Not authenticated`, `Invalid token`, `Token expired`).',
  403: 'Authenticated, but not allowed: not the owner, not a member, needs admin, or needs ingest permission.',
  404: 'The resource does not exist, or is not visible to the caller.',
  413: 'The upload exceeds 50 MB.',
  415: 'Unsupported file type.',
  422: 'The request failed validation; `detail` lists each problem.',
  429: 'The caller’s daily ingestion quota is used up (`quota_exceeded`); `Retry-After` gives the seconds until it resets at 00:00 UTC.',
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

/** Responses every authenticated route can give. */
export const authErrors = [401, 422, 503] as const;

/** What a route on one collection adds: the caller may not use it, or it is not there. */
export const collectionErrors = [403, 404] as const;
