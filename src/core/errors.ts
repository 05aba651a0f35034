/**
 * What went wrong, in the domain's words. Services, core and the workers throw this;
 * only a deployable's edge decides what a kind becomes (the API: a public code, a
 * status and, for `invalid`, where in the request the field was).
 */
export type ErrorKind =
  | 'unauthenticated'
  | 'token_expired'
  | 'invalid_token'
  | 'invalid_api_key'
  | 'api_key_revoked'
  | 'api_key_expired'
  | 'ambiguous_credentials'
  | 'forbidden'
  | 'not_found'
  | 'too_large'
  | 'unsupported_type'
  | 'invalid'
  | 'unavailable'
  | 'quota_exceeded'
  | 'token_cap_exceeded'
  | 'rate_limited'
  | 'conflict'
  | 'upstream_failed'
  | 'misconfigured';

export interface ErrorDetails {
  /** The input that is wrong, named as the caller's input names it. */
  field?: string;
  /** A machine-readable reason for an `invalid` field. */
  type?: string;
  /** For `quota_exceeded`, `token_cap_exceeded` and `rate_limited`: seconds until the caller may try again. */
  retryAfter?: number;
}

export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly details: ErrorDetails = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const notFound = (what: string) => new DomainError('not_found', `${what} not found`);
export const forbidden = (why: string) => new DomainError('forbidden', why);
export const invalid = (field: string, message: string, type = 'value_error') =>
  new DomainError('invalid', message, { field, type });
export const unavailable = (message: string) => new DomainError('unavailable', message);
export const conflict = (message: string) => new DomainError('conflict', message);
