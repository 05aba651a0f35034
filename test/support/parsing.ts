import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { ParseError } from '../../workers/ingest/src/parsers/types.ts';

const FIXTURES = new URL('../fixtures/docs/', import.meta.url);

/** A file of test/fixtures/docs (see its MANIFEST.tsv). */
export const fixture = (name: string) => new Uint8Array(readFileSync(new URL(name, FIXTURES)));

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
