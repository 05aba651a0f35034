import type { QueryRequest } from '../../../client/index.ts';
import type { Choices } from './AskBox.tsx';

/**
 * A first question hands over to its new chat's page: the chat is made, the address becomes the chat's, and
 * that page asks the question, so the answer streams where it will stay (and the back button returns to the
 * empty chat), with the advanced choices it was asked with, for the follow-ups. One at a time: only the page of
 * that session takes it.
 */
interface HandedOver {
  sessionId: string;
  body: QueryRequest;
  choices: Choices;
}
let pending: HandedOver | null = null;

export function handOver(handed: HandedOver) {
  pending = handed;
}

export function takeOver(sessionId: string | null): HandedOver | null {
  if (!pending || pending.sessionId !== sessionId) return null;
  const handed = pending;
  pending = null;
  return handed;
}
