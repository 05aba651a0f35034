import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

/**
 * An error GoTrue would answer with its HTTPError: an HTTP status, one of its
 * error codes, and a message. The wire shape depends on the API version the
 * client asked for, so it is only decided when the response is written.
 */
export class AuthError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    /** Extra top-level fields, such as weak_password's reasons. */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'AuthError';
  }
}

/** GoTrue's OAuth2-shaped errors ({error, error_description}); the refresh grant still uses one. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
  ) {
    super(description);
    this.name = 'OAuthError';
  }
}

export const badRequest = (code: string, message: string) => new AuthError(400, code, message);
export const unauthorized = (code: string, message: string) => new AuthError(401, code, message);
export const forbidden = (code: string, message: string) => new AuthError(403, code, message);
export const notFound = (code: string, message: string) => new AuthError(404, code, message);
export const unprocessable = (code: string, message: string) => new AuthError(422, code, message);

export function weakPassword(message: string, reasons: string[]): AuthError {
  return new AuthError(422, 'weak_password', message, { weak_password: { reasons } });
}

const API_VERSION_HEADER = 'X-Supabase-Api-Version';
const API_VERSION_2024 = '2024-01-01';
const UNEXPECTED = 'Unexpected failure, please check server logs for more information';

/**
 * auth-js sends X-Supabase-Api-Version: 2024-01-01 and, like GoTrue, we then answer
 * {code: "<error_code>", message} and echo the header; without it (curl, older
 * clients) the original {code: <status>, error_code, msg} shape is used. auth-js
 * reads error_code from either.
 */
function wantsVersion2024(c: Context): boolean {
  const requested = c.req.header(API_VERSION_HEADER);
  if (!requested || !/^\d{4}-\d{2}-\d{2}$/.test(requested)) return false;
  const date = new Date(`${requested}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && requested >= API_VERSION_2024;
}

export function renderError(c: Context, err: unknown): Response {
  if (err instanceof OAuthError) {
    return c.json({ error: err.error, error_description: err.description }, 400);
  }
  const versioned = wantsVersion2024(c);
  if (versioned) c.header(API_VERSION_HEADER, API_VERSION_2024);

  if (!(err instanceof AuthError)) {
    // The cause stays in the server log; the client only ever sees the generic text.
    console.error('[devstack auth] unexpected failure:', err);
    return versioned
      ? c.json({ code: 'unexpected_failure', message: UNEXPECTED }, 500)
      : c.json({ code: 500, error_code: 'unexpected_failure', msg: UNEXPECTED }, 500);
  }
  return versioned
    ? c.json({ code: err.code, message: err.message, ...err.extra }, err.status)
    : c.json({ code: err.status, error_code: err.code, msg: err.message, ...err.extra }, err.status);
}
