/**
 * A typed client of the API for programs: openapi-fetch, typed by client/schema.d.ts (`npm run openapi`).
 *
 *   const rag = createRagClient({ baseUrl: 'https://rag.example.com', apiKey: process.env.RAG_API_KEY });
 *   const { data, error } = await rag.GET('/collections');            // typed by the operation
 *   const asked = await ask(rag, { question: 'Who appoints standing trustees?', collection_id });
 *   if (asked.data) for await (const event of asked.data) if (event.event === 'token') process.stdout.write(event.data.token);
 *
 * Every call answers openapi-fetch's `{ data, error, response }`: `error` is the API's `Error` (`{detail, code,
 * request_id}`) for any status that is not 2xx; nothing throws for an HTTP status. client/example.ts walks through it.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './schema.d.ts';

export type { components, operations, paths } from './schema.d.ts';

type Schemas = components['schemas'];
/** The API's error body: `{detail, code, request_id}`. */
export type ApiError = Schemas['Error'];
export type QueryRequest = Schemas['QueryRequest'];
export type Source = Schemas['Source'];
/** One event of `POST /query/`, `data` parsed: narrow on `event` for its payload's type. */
export type QueryEvent = Schemas['QueryEvent'];
export type QueryMetadataEvent = Schemas['QueryMetadataEvent'];
export type QueryTokenEvent = Schemas['QueryTokenEvent'];
export type QueryDoneEvent = Schemas['QueryDoneEvent'];
export type QueryErrorEvent = Schemas['QueryErrorEvent'];
/** What a webhook receiver gets when one of your ingest jobs ends; verifyWebhook checks it came from us, once. */
export type WebhookPayload = Schemas['WebhookPayload'];
export { type SeenIds, TOLERANCE_SECONDS, type Verdict, verifyWebhook } from './webhook-verify.ts';

export type RagClient = Client<paths>;

export interface RagClientOptions {
  /** The API's origin, e.g. `http://127.0.0.1:8787`. */
  baseUrl: string;
  /** A Supabase Auth access token, sent as `Authorization: Bearer`. */
  token?: string;
  /** An API key (`POST /keys/`), sent as `X-API-Key`. */
  apiKey?: string;
  /** Instead of the global fetch. */
  fetch?: (request: Request) => Promise<Response>;
}

/** A client that sends one credential (or none, for `/health`): the API refuses both at once (401 `ambiguous_credentials`). */
export function createRagClient({ baseUrl, token, apiKey, fetch }: RagClientOptions): RagClient {
  if (token !== undefined && apiKey !== undefined) throw new Error('createRagClient: give a token or an API key, not both');
  const headers: Record<string, string> = {};
  if (token !== undefined) headers.Authorization = `Bearer ${token}`;
  if (apiKey !== undefined) headers['X-API-Key'] = apiKey;
  return createClient<paths>({ baseUrl, headers, ...(fetch ? { fetch } : {}) });
}

export type AskResult =
  | { data: AsyncGenerator<QueryEvent>; error?: never; response: Response }
  | { data?: never; error: ApiError; response: Response };

/**
 * `POST /query/`: on success `data` is the answer's events as they arrive (`metadata`, then `token`s, then `done` or
 * `error`); otherwise `error`, before any event. Stopping early (`break`, or `signal`) disconnects, which stops generation.
 */
export async function ask(client: RagClient, body: QueryRequest, init: { signal?: AbortSignal } = {}): Promise<AskResult> {
  const result = await client.POST('/query', { body, parseAs: 'stream', signal: init.signal });
  if (result.error !== undefined) return result;
  if (!result.data) throw new Error(`POST /query/ answered ${result.response.status} without a body`);
  return { data: readQueryStream(result.data), response: result.response };
}

/** The events `readQueryStream` knows; one the description gains is a type error here until it is added. */
const EVENTS: Record<QueryEvent['event'], true> = { metadata: true, token: true, done: true, error: true };

/**
 * Reads `POST /query/`'s Server-Sent Events (a `Response`, or its body as openapi-fetch's `parseAs: 'stream'` gives
 * it), yielding each as `{event, data}` with `data` parsed. Events of other names are skipped, as SSE clients do.
 * Leaving the loop early cancels the body.
 */
export async function* readQueryStream(source: Response | ReadableStream<Uint8Array>): AsyncGenerator<QueryEvent> {
  let body: ReadableStream<Uint8Array> | null = source as ReadableStream<Uint8Array>;
  if (source instanceof Response) {
    const type = source.headers.get('Content-Type') ?? '';
    if (!source.ok || !type.startsWith('text/event-stream'))
      throw new Error(`Expected an event stream, got ${source.status} ${type}: ${await source.text()}`);
    body = source.body;
  }
  if (!body) throw new Error('The response has no body');

  const parsed: QueryEvent[] = [];
  const parser = createParser({
    onEvent: ({ event, data }: EventSourceMessage) => {
      if (event !== undefined && Object.hasOwn(EVENTS, event)) parsed.push({ event, data: JSON.parse(data) } as QueryEvent);
    },
  });
  const reader = body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      // An event is dispatched by the blank line after it: what is left at the end was never complete.
      parser.feed(done ? decoder.decode() : decoder.decode(value, { stream: true }));
      yield* parsed.splice(0);
      if (done) return;
    }
  } finally {
    // Early return (break, throw): cancelling the body disconnects, and the API stops generating.
    await reader.cancel().catch(() => {});
  }
}

/** The multipart upload openapi-fetch cannot make from the description alone: `file` as the form's `file` part. */
export interface Upload {
  file: Blob;
  fileName: string;
  /** Omitted: the caller's personal namespace. */
  collection_id?: string;
  /** A new version of this document (see `POST /ingest/`). */
  replace_document_id?: string;
}

/** `POST /ingest/`: `data` is the job (`{job_id, document_id, duplicate}`); poll `GET /ingest/jobs/{job_id}`. */
export function uploadFile(client: RagClient, { file, fileName, collection_id, replace_document_id }: Upload) {
  return client.POST('/ingest', {
    params: { query: { collection_id, replace_document_id } },
    // The description types the binary part as a string; the form is built here from the Blob itself. FormData
    // leaves the Content-Type, with its boundary, to fetch.
    body: { file: fileName },
    bodySerializer: () => {
      const form = new FormData();
      form.append('file', file, fileName);
      return form;
    },
  });
}
