/**
 * A failed call to an external service. The message is for logs only: clients see
 * the service's plain name and a status (502 for storage, 503 for the queue).
 */
export class UpstreamError extends Error {
  constructor(
    readonly service: 'storage' | 'queue' | 'vectors' | 'models' | 'dns',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${service}: ${message}`, options);
    this.name = 'UpstreamError';
  }
}

export function describeCause(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (error && typeof error === 'object' && 'message' in error) return String(error.message);
  return String(error);
}
