import type { QueryRequest } from '../../../client/index.ts';

/**
 * A first question hands over to its new chat's page: the chat is made, the address becomes the chat's, and
 * that page asks the question, so the answer streams where it will stay (and the back button returns to the
 * empty chat). One at a time: only the page of that session takes it.
 */
let pending: { sessionId: string; body: QueryRequest } | null = null;

export function handOver(sessionId: string, body: QueryRequest) {
  pending = { sessionId, body };
}

export function takeOver(sessionId: string | null): QueryRequest | null {
  if (!pending || pending.sessionId !== sessionId) return null;
  const { body } = pending;
  pending = null;
  return body;
}
