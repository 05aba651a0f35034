import { auth, loginUrl } from './session.ts';

/** An API error in words: the contract's `detail`, never a status code or a stack trace. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    detail: string,
  ) {
    super(detail);
  }
}

/** `detail` is a string, or for 422 a list of `{loc, msg}`. */
function detailOf(body: unknown, status: number): string {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) return detail.map((item: { msg?: string }) => item.msg ?? '').join('; ');
  return status >= 500 ? 'The service is having trouble. Try again in a moment.' : 'The request was refused.';
}

async function send(method: string, path: string, token: string, body?: unknown): Promise<Response> {
  return fetch(path, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** Off to the login page, to come back here; the work in hand stops with this error. */
function signedOut(): ApiError {
  location.assign(loginUrl());
  return new ApiError(401, 'Your session has ended. Sign in again.');
}

/**
 * Calls the API as the signed-in user. A 401 in the middle of work refreshes the token once and
 * retries; if that fails too, the browser goes to /login and comes back here afterwards.
 */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const { data } = await auth().getSession();
  if (!data.session) throw signedOut();
  let response = await send(method, path, data.session.access_token, body);
  if (response.status === 401) {
    const refreshed = await auth().refreshSession();
    if (!refreshed.data.session) throw signedOut();
    response = await send(method, path, refreshed.data.session.access_token, body);
    if (response.status === 401) {
      await auth().signOut({ scope: 'local' });
      throw signedOut();
    }
  }
  const parsed = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, detailOf(parsed, response.status));
  return parsed as T;
}
