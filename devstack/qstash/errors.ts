import type { ContentfulStatusCode } from 'hono/utils/http-status';

/** Answered as QStash answers errors: the status and `{"error": message}`. */
export class QStashError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
  ) {
    super(message);
    this.name = 'QStashError';
  }
}

export const badRequest = (message: string) => new QStashError(400, message);
export const notFound = (message: string) => new QStashError(404, message);
