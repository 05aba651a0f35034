import { expect } from 'vitest';
import { ParseError } from '../../workers/ingest/src/parsers/types.ts';

export const utf8 = (s: string) => new TextEncoder().encode(s);

/** The ParseError a parser throws; fails the test when it throws nothing or something else. */
export function failure(fn: () => unknown): ParseError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ParseError);
    return error as ParseError;
  }
  throw new Error('expected a ParseError');
}

/** The ParseError a parser's promise rejects with; fails the test when it resolves or rejects with something else. */
export async function rejection(promise: Promise<unknown>): Promise<ParseError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ParseError);
  return error as ParseError;
}
