/**
 * One request to the API over HTTP, its response body typed by the OpenAPI description (client/schema.d.ts): the
 * tests, the smoke journey and the benchmarks call through it, so a changed response shape fails type checking
 * wherever it is read. No vitest here, so that bench/ can use it too.
 */
import type { components, paths } from '../../client/index.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS' | 'HEAD';

/** A schema of the description by name: `Schema<'IngestJob'>`. */
export type Schema<N extends keyof components['schemas']> = components['schemas'][N];

/** The API's error body, `{detail, code, request_id}`. */
export type ErrorBody = Schema<'Error'>;

type Split<P extends string> = P extends `${infer Head}/${infer Rest}` ? [Head, ...Split<Rest>] : [P];
type WithoutQuery<P extends string> = P extends `${infer Path}?${string}` ? Path : P;
// The API answers `/collections/` as it does `/collections`.
type WithoutSlash<P extends string> = P extends `${infer Path}/` ? Path : P;
/** A description's path as segments, `{param}` as any one segment: `/collections/{id}` is ['', 'collections', string]. */
type Pattern<K extends string> = K extends `${infer Head}/${infer Rest}`
  ? [Head extends `{${string}}` ? string : Head, ...Pattern<Rest>]
  : [K extends `{${string}}` ? string : K];

/**
 * The description's paths that a call's path matches. Comparing segment tuples, rather than the path against
 * `/collections/${string}`, keeps `/collections/{id}` from also matching `/collections/{id}/documents`.
 */
type PathKeys<P extends string> = {
  [K in keyof paths]: Split<WithoutSlash<WithoutQuery<P>>> extends Pattern<K> ? K : never;
}[keyof paths];

/** Distributes over a union of methods and of paths, as a table of calls gives them. */
type Operation<M extends Method, P extends string> = M extends Method
  ? P extends string
    ? PathKeys<P> extends infer K
      ? K extends keyof paths
        ? paths[K] extends Record<Lowercase<M>, infer Op>
          ? Op
          : never
        : never
      : never
    : never
  : never;

/** `GET /openapi.json`, which the description does not list: the description itself, as `npm run openapi` last wrote it. */
type Description = typeof import('../../client/openapi.json');

/** A 2xx response's body: the JSON, or the event stream's text (`POST /query/`); never, for a 204. */
type SuccessBody<Op> = Op extends { responses: infer Responses }
  ? {
      [S in keyof Responses]: S extends 200 | 201 | 202
        ? Responses[S] extends { content: infer Content }
          ? Content[keyof Content]
          : never
        : never;
    }[keyof Responses]
  : never;

/**
 * What `method path` answers, by the description: the 2xx body, with the error body's fields optional because a
 * test also reads the `detail` and `code` of a refusal. A page, a route the description lacks or a method it does
 * not list is `unknown`: such a test says what it expects, with a cast.
 */
export type ResponseBody<M extends Method, P extends string> = P extends '/openapi.json'
  ? Description
  : [Operation<M, P>] extends [never]
    ? unknown
    : [SuccessBody<Operation<M, P>>] extends [never]
      ? Partial<ErrorBody>
      : SuccessBody<Operation<M, P>> & Partial<ErrorBody>;

/** A query string to append to a path: a helper typed with it keeps its path one of the description's. */
export type Query = '' | `?${string}`;

export interface ApiResponse<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

export interface CallOptions {
  token?: string;
  /** JSON unless a string or a FormData; left unknown, so that a test can send what the description refuses. */
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** A fetch Response whose `json()` is typed by the description: for a caller that times reading the body itself. */
export type TypedResponse<T> = Omit<Response, 'json'> & { json(): Promise<T> };

/**
 * POST /ingest/'s multipart body, as curl -F or a browser would send it; a string goes as its UTF-8 bytes. `metadata`
 * (JSON text, or a value to write as JSON) comes before the file, as the API reads only fields before it.
 */
export function fileForm(name: string, content: Uint8Array | string, metadata?: unknown): FormData {
  const bytes = typeof content === 'string' ? new TextEncoder().encode(content) : content;
  const form = new FormData();
  if (metadata !== undefined) form.append('metadata', typeof metadata === 'string' ? metadata : JSON.stringify(metadata));
  form.append('file', new Blob([bytes as Uint8Array<ArrayBuffer>]), name);
  return form;
}

/** Calls `method path` at `baseUrl`; the body is parsed as JSON when it is JSON, else left as text. */
export async function callApi<M extends Method, P extends string>(
  baseUrl: string,
  method: M,
  path: P,
  { token, body, headers: extra, signal }: CallOptions = {},
): Promise<ApiResponse<ResponseBody<M, P>>> {
  const headers: Record<string, string> = { ...extra };
  if (token !== undefined) headers.Authorization = `Bearer ${token}`;
  const form = body instanceof FormData;
  if (body !== undefined && !form) headers['Content-Type'] = 'application/json';
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : form || typeof body === 'string' ? body : JSON.stringify(body),
    signal,
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: a page, an event stream, an empty 204
  }
  return { status: response.status, body: parsed as ResponseBody<M, P>, headers: response.headers };
}
