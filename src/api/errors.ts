import { z } from '@hono/zod-openapi';
import { HTTPException } from 'hono/http-exception';
import { ZodError } from 'zod';
import { UpstreamError } from '#core/adapters/upstream-error.ts';
import { isDatabaseUnreachable, isMissingParent } from '#core/db/client.ts';
import { DomainError, type ErrorKind } from '#core/errors.ts';
import { MALFORMED_BODY, zodIssues } from './validation.ts';

/** The public error codes: clients branch on these, so they never change. */
export const ErrorCode = z.enum([
  'unauthenticated',
  'token_expired',
  'invalid_token',
  'invalid_api_key',
  'api_key_revoked',
  'api_key_expired',
  'ambiguous_credentials',
  'forbidden',
  'not_found',
  'conflict',
  'payload_too_large',
  'quota_exceeded',
  'token_cap_exceeded',
  'rate_limited',
  'unsupported_media_type',
  'validation_failed',
  'upstream_failed',
  'service_unavailable',
  'misconfigured',
  'internal_error',
]);
export type ErrorCode = z.infer<typeof ErrorCode>;

export const STATUS_BY_CODE = {
  unauthenticated: 401,
  token_expired: 401,
  invalid_token: 401,
  invalid_api_key: 401,
  api_key_revoked: 401,
  api_key_expired: 401,
  ambiguous_credentials: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  validation_failed: 422,
  quota_exceeded: 429,
  token_cap_exceeded: 429,
  rate_limited: 429,
  internal_error: 500,
  misconfigured: 500,
  upstream_failed: 502,
  service_unavailable: 503,
} as const satisfies Record<ErrorCode, number>;

export type ErrorStatus = (typeof STATUS_BY_CODE)[ErrorCode];

export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** An error response as clients receive it, before the request id is added. */
export class HttpError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly detail: string | ValidationIssue[],
    /** Seconds, sent as `Retry-After`. */
    readonly retryAfter?: number,
  ) {
    super(typeof detail === 'string' ? detail : 'Request validation failed');
    this.name = 'HttpError';
  }

  get status(): ErrorStatus {
    return STATUS_BY_CODE[this.code];
  }
}

export const validationFailed = (issues: ValidationIssue[]) => new HttpError('validation_failed', issues);

const CODE_BY_KIND = {
  unauthenticated: 'unauthenticated',
  token_expired: 'token_expired',
  invalid_token: 'invalid_token',
  invalid_api_key: 'invalid_api_key',
  api_key_revoked: 'api_key_revoked',
  api_key_expired: 'api_key_expired',
  ambiguous_credentials: 'ambiguous_credentials',
  forbidden: 'forbidden',
  conflict: 'conflict',
  not_found: 'not_found',
  too_large: 'payload_too_large',
  unsupported_type: 'unsupported_media_type',
  invalid: 'validation_failed',
  unavailable: 'service_unavailable',
  quota_exceeded: 'quota_exceeded',
  token_cap_exceeded: 'token_cap_exceeded',
  rate_limited: 'rate_limited',
  upstream_failed: 'upstream_failed',
  misconfigured: 'misconfigured',
} as const satisfies Record<ErrorKind, ErrorCode>;

/** Whatever a handler threw, as the response the contract promises for it. */
export function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof DomainError) return fromDomain(error);
  if (error instanceof ZodError) return validationFailed(zodIssues(error));
  // A parent row (collection, session, user) was deleted by a concurrent request.
  if (isMissingParent(error)) return new HttpError('not_found', 'Not found: it was deleted in the meantime');
  // Like the queue: a passing outage that a retry may outlive, named without the driver's words.
  if (isDatabaseUnreachable(error)) return new HttpError('service_unavailable', 'The database is unavailable; try again shortly');
  if (error instanceof UpstreamError) return fromUpstream(error);
  if (error instanceof HTTPException && error.status === 400) return validationFailed(MALFORMED_BODY);
  if (error instanceof HTTPException && error.status === 404) return new HttpError('not_found', 'Not found');
  return new HttpError('internal_error', 'Internal server error');
}

function fromDomain(error: DomainError): HttpError {
  const code = CODE_BY_KIND[error.kind];
  if (error.kind !== 'invalid') return new HttpError(code, error.message, error.details.retryAfter);
  // Every field a service checks itself comes from the request body.
  const { field, type = 'value_error' } = error.details;
  return validationFailed([{ loc: field ? ['body', snakeCase(field)] : ['body'], msg: error.message, type }]);
}

const snakeCase = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/** Clients learn which service failed, never what it said. */
function fromUpstream(error: UpstreamError): HttpError {
  switch (error.service) {
    case 'queue':
      return new HttpError('service_unavailable', 'The ingestion queue is unavailable; try again shortly');
    case 'dns':
      return new HttpError('service_unavailable', 'The host name could not be resolved right now; try again shortly');
    case 'storage':
      return new HttpError('upstream_failed', 'The storage service failed');
    case 'vectors':
      return new HttpError('upstream_failed', 'The vector index failed');
    case 'models':
      return new HttpError('upstream_failed', 'The model provider failed');
  }
}
