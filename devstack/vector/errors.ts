/** A failure the REST layer reports as Upstash does: `{ error, status }` with that HTTP status. */
export class VectorError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 422 | 500 | 503,
    message: string,
  ) {
    super(message);
    this.name = 'VectorError';
  }
}

export const badRequest = (message: string) => new VectorError(400, message);
