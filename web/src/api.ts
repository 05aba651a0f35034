import { auth, loginUrl } from './session.ts';

/** An API error in words: the contract's `detail`, never a status code or a stack trace. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    detail: string,
    /** For a refused body (422): each field the API named, with its reason, to show beside that field. */
    readonly fields: Readonly<Record<string, string>> = {},
  ) {
    super(detail);
  }
}

/** The reason the API gave for one field of a refused body, if it named that field. */
export const fieldError = (error: unknown, field: string): string | undefined =>
  error instanceof ApiError ? error.fields[field] : undefined;

/** What went wrong, in words: an ApiError's detail, another error's message, or the text given. */
export const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** `detail` is a string, or for 422 a list of `{loc, msg}`. */
function detailOf(body: unknown, status: number): string {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) return detail.map((item: { msg?: string }) => item.msg ?? '').join('; ');
  return status >= 500 ? 'The service is having trouble. Try again in a moment.' : 'The request was refused.';
}

/** A 422's `{loc, msg}` items by field: the last name in `loc` (`["body", "url"]` is `url`). */
function fieldsOf(body: unknown): Record<string, string> {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (!Array.isArray(detail)) return {};
  const fields: Record<string, string> = {};
  for (const item of detail as { loc?: unknown[]; msg?: string }[]) {
    const field = item.loc?.findLast((part): part is string => typeof part === 'string' && part !== 'body');
    if (field && item.msg) fields[field] ??= item.msg;
  }
  return fields;
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

/** The API refused a freshly refreshed token too: this session is over. */
async function sessionOver(): Promise<never> {
  await auth().signOut({ scope: 'local' });
  throw signedOut();
}

/**
 * Calls the API as the signed-in user. A 401 in the middle of work refreshes the token once and
 * retries; if that fails too, the browser goes to /login and comes back here afterwards.
 */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  let response = await send(method, path, await accessToken(), body);
  if (response.status === 401) response = await send(method, path, await accessToken(true), body);
  if (response.status === 401) return sessionOver();
  const parsed = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, detailOf(parsed, response.status), fieldsOf(parsed));
  return parsed as T;
}

/** The access token, refreshed when `stale` (the API refused the last one). */
async function accessToken(stale = false): Promise<string> {
  const { data } = stale ? await auth().refreshSession() : await auth().getSession();
  if (!data.session) throw signedOut();
  return data.session.access_token;
}

function xhrUpload(path: string, file: File, token: string, onBytes: (sent: number) => void) {
  return new Promise<{ status: number; body: unknown }>((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', path);
    request.setRequestHeader('Authorization', `Bearer ${token}`);
    request.upload.onprogress = (event) => onBytes(event.loaded);
    request.onload = () => {
      let body: unknown = null;
      try {
        body = JSON.parse(request.responseText);
      } catch {}
      resolve({ status: request.status, body });
    };
    request.onerror = () => reject(new ApiError(0, 'The upload was cut off. Check your connection and try again.'));
    const form = new FormData();
    form.append('file', file);
    request.send(form);
  });
}

/** What an upload answers: the job to watch, and whether the place already held the same bytes. */
export interface Accepted {
  job_id: string;
  duplicate: boolean;
}

/**
 * Uploads a file for ingestion, reporting the bytes sent as they go (fetch cannot); a 401 refreshes
 * the token once and sends again, like `api`.
 */
export async function uploadFile(file: File, collectionId: string | null, onBytes: (sent: number) => void): Promise<Accepted> {
  const path = collectionId ? `/ingest?collection_id=${encodeURIComponent(collectionId)}` : '/ingest';
  let answer = await xhrUpload(path, file, await accessToken(), onBytes);
  if (answer.status === 401) answer = await xhrUpload(path, file, await accessToken(true), onBytes);
  if (answer.status === 401) return sessionOver();
  if (answer.status !== 200) throw new ApiError(answer.status, detailOf(answer.body, answer.status));
  return answer.body as Accepted;
}

/**
 * Asks a question (POST /query/) and returns the event stream's response once the service has
 * accepted it; a refusal throws its detail. `signal` stops generation (the stop button).
 */
export async function ask(body: object, signal: AbortSignal): Promise<ReadableStream<Uint8Array>> {
  const post = async (token: string) =>
    fetch('/query/', {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      signal,
    });
  let response = await post(await accessToken());
  if (response.status === 401) response = await post(await accessToken(true));
  if (response.status === 401) return sessionOver();
  if (!response.ok || !response.body) {
    throw new ApiError(response.status, detailOf(await response.json().catch(() => null), response.status));
  }
  return response.body;
}
