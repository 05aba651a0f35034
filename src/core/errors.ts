import { z } from '@hono/zod-openapi';

/**
 * The closed set of error codes. Services throw AppError with one of these; only
 * the HTTP layer (statusFor, the app's onError) knows which status each maps to.
 */
export const ErrorCode = z.enum([
  'unauthenticated',
  'token_expired',
  'invalid_token',
  'forbidden',
  'not_found',
  'payload_too_large',
  'unsupported_media_type',
  'validation_failed',
  'upstream_failed',
  'service_unavailable',
  'misconfigured',
  'internal_error',
]);
export type ErrorCode = z.infer<typeof ErrorCode>;

export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly detail: string | ValidationIssue[],
  ) {
    super(typeof detail === 'string' ? detail : 'Request validation failed');
    this.name = 'AppError';
  }
}

export const STATUS_BY_CODE = {
  unauthenticated: 401,
  token_expired: 401,
  invalid_token: 401,
  forbidden: 403,
  not_found: 404,
  payload_too_large: 413,
  unsupported_media_type: 415,
  validation_failed: 422,
  internal_error: 500,
  misconfigured: 500,
  upstream_failed: 502,
  service_unavailable: 503,
} as const satisfies Record<ErrorCode, number>;

export type ErrorStatus = (typeof STATUS_BY_CODE)[ErrorCode];

export const notFound = (what: string) => new AppError('not_found', `${what} not found`);
export const forbidden = (why: string) => new AppError('forbidden', why);
