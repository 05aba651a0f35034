import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

/** An error in OpenAI's wire shape: `{ error: { message, type, param, code } }` with an HTTP status. */
export class OpenAIError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly type: string,
    message: string,
    readonly code: string | null = null,
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = 'OpenAIError';
  }

  body() {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

export const invalidRequest = (message: string, param: string | null = null, code: string | null = null) =>
  new OpenAIError(400, 'invalid_request_error', message, code, param);

export const modelNotFound = (model: string, served: string[]) =>
  new OpenAIError(
    404,
    'invalid_request_error',
    `The model '${model}' does not exist on this devstack; it serves: ${served.join(', ')}`,
    'model_not_found',
    'model',
  );

/** Anything unexpected becomes a bare 500: the cause goes to the log, never to the client. */
export function renderError(c: Context, error: unknown, log: (line: string) => void): Response {
  if (error instanceof OpenAIError) return c.json(error.body(), error.status);
  log(`openai: ${c.req.method} ${c.req.path} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return c.json(new OpenAIError(500, 'server_error', 'The server had an error while processing your request.').body(), 500);
}
