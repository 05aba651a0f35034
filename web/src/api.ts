import {
  type components,
  createRagClient,
  type ApiError as ErrorBody,
  type QueryEvent,
  type QueryRequest,
  type RagClient,
  readQueryStream,
} from '../../client/index.ts';
import { auth, loginUrl } from './session.ts';

/** The API's own types, by their schema names: `Schema<'Document'>`. Never copied by hand. */
export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name];

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

/** The access token, refreshed when `stale` (the API refused the last one). */
async function accessToken(stale = false): Promise<string> {
  const { data } = stale ? await auth().refreshSession() : await auth().getSession();
  if (!data.session) throw signedOut();
  return data.session.access_token;
}

/**
 * Sends as the signed-in user. A 401 in the middle of work refreshes the token once and retries; if
 * that fails too, the browser goes to /login and comes back here afterwards.
 */
async function signedFetch(request: Request): Promise<Response> {
  // The body read once, as bytes, for both attempts: a cloned or rebuilt Request would send it as a stream.
  const body = request.body ? await request.arrayBuffer() : undefined;
  const send = async (token: string) => {
    const headers = new Headers(request.headers);
    headers.set('Authorization', `Bearer ${token}`);
    return fetch(request.url, { method: request.method, headers, body, signal: request.signal });
  };
  let response = await send(await accessToken());
  if (response.status === 401) response = await send(await accessToken(true));
  if (response.status === 401) return sessionOver();
  return response;
}

/** The typed client (client/index.ts), signed in as the browser's user, on this origin. */
export const rag: RagClient = createRagClient({ baseUrl: location.origin, fetch: signedFetch });

/**
 * The data of a typed call, or its refusal as an ApiError:
 *
 *   const docs = await call(rag.GET('/collections/{id}/documents', { params: { path: { id } } }));
 */
export async function call<Data>(
  pending: Promise<{ data?: Data; error?: unknown; response: Response }>,
): Promise<Exclude<Data, undefined>> {
  const { data, error, response } = await pending;
  if (error !== undefined || !response.ok) {
    throw new ApiError(response.status, detailOf(error, response.status), fieldsOf(error));
  }
  return data as Exclude<Data, undefined>;
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

/** Where an upload goes: a collection (or the personal space), and the document it replaces, if any. */
export interface UploadTarget {
  collectionId: string | null;
  replaceDocumentId?: string;
}

/**
 * `POST /ingest/` with the bytes sent reported as they go, which fetch cannot do (so XMLHttpRequest,
 * typed by the same description); a 401 refreshes the token once and sends again, like `rag`.
 */
export async function uploadFile(
  file: File,
  { collectionId, replaceDocumentId }: UploadTarget,
  onBytes: (sent: number) => void,
): Promise<Schema<'JobCreated'>> {
  const query = new URLSearchParams();
  if (collectionId) query.set('collection_id', collectionId);
  if (replaceDocumentId) query.set('replace_document_id', replaceDocumentId);
  const path = `/ingest${query.size ? `?${query}` : ''}`;
  let answer = await xhrUpload(path, file, await accessToken(), onBytes);
  if (answer.status === 401) answer = await xhrUpload(path, file, await accessToken(true), onBytes);
  if (answer.status === 401) return sessionOver();
  if (answer.status !== 200) throw new ApiError(answer.status, detailOf(answer.body, answer.status), fieldsOf(answer.body));
  return answer.body as Schema<'JobCreated'>;
}

/**
 * Asks a question (`POST /query/`) and yields its events as they arrive; a refusal throws its detail
 * before any event. `signal` stops generation (the stop button).
 */
export async function* ask(body: QueryRequest, signal: AbortSignal): AsyncGenerator<QueryEvent> {
  const { data, error, response } = await rag.POST('/query', { body, parseAs: 'stream', signal });
  if (error !== undefined || !data) throw new ApiError(response.status, detailOf(error, response.status), fieldsOf(error));
  yield* readQueryStream(data);
}

export type { ErrorBody, QueryEvent };
