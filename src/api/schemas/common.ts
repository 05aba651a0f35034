import { z } from '@hono/zod-openapi';

export const Timestamp = z.string().openapi({ format: 'date-time', example: '2026-11-21T22:33:00.000Z' });
export const Id = z.string().openapi({ format: 'uuid', example: '3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f' });
export const Permission = z.enum(['query', 'ingest']).openapi('Permission');

// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what this refuses
const NO_CONTROLS = /^[^\u0000-\u001f\u007f]*$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what this refuses
const NO_CONTROLS_BUT_LINES = /^[^\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]*$/;

export interface TextRules {
  /** Characters after trimming; 1 makes an empty or white-space-only value a 422. */
  min?: number;
  max?: number;
  /** Keep tab, line feed and carriage return (a question); everything else stays single-line. */
  multiline?: boolean;
  /** Trim surrounding white space first (the default); ids and tokens keep theirs. */
  trim?: boolean;
}

/**
 * Every string a client types. NUL cannot be stored in a Postgres text column (a 500 before this),
 * and the other C0 controls and DEL have no place in a name, a title or a URL; so they are a 422
 * here, with `loc` naming the field, instead of a failure deep inside a service.
 */
export function text({ min = 0, max, multiline = false, trim = true }: TextRules = {}) {
  let schema = trim ? z.string().trim() : z.string();
  if (min > 0) schema = schema.min(min, min === 1 ? 'Must not be empty or only white space' : undefined);
  if (max !== undefined) schema = schema.max(max);
  return multiline
    ? schema.regex(NO_CONTROLS_BUT_LINES, 'Must not contain control characters other than tabs and line breaks')
    : schema.regex(NO_CONTROLS, 'Must not contain control characters (NUL, tabs, line breaks and the like)');
}

/** An id or token as typed: no trimming, no control characters. */
export const plainText = (rules: Omit<TextRules, 'trim' | 'multiline'> = {}) => text({ ...rules, trim: false });

export const pathParam = (name: string, description: string) => plainText().openapi({ param: { name, in: 'path' }, description });

export const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

/** A JSON request body; optional only where the route says so. */
export const jsonBody = <T extends z.ZodType>(schema: T, { required = true } = {}) => ({
  required,
  content: { 'application/json': { schema } },
});

/** A body's target collection. */
export const OptionalCollectionId = plainText()
  .nullish()
  .openapi({ description: 'Omitted, null or empty: the caller’s personal namespace.' });

export const CollectionParams = z.object({ id: pathParam('id', 'Collection id') });
export const ChatCollectionParams = z.object({ collection_id: pathParam('collection_id', 'Collection id') });

const limit = z.coerce.number().int().min(1).max(200);
const offset = z.coerce.number().int().min(0);
// Spelled out: the generator otherwise describes a coerced number as nullable.
const offsetDoc = { param: { name: 'offset', in: 'query' as const }, type: 'integer' as const, minimum: 0, example: 0 };

/** `limit` (1–200, default `defaultLimit`) and `offset` (≥ 0, default 0) query parameters. */
export const pageQuery = (defaultLimit: number) => ({
  limit: limit.default(defaultLimit).openapi({
    param: { name: 'limit', in: 'query' },
    description: `Page size, 1–200 (default ${defaultLimit})`,
    example: defaultLimit,
  }),
  offset: offset.default(0).openapi({ ...offsetDoc, default: 0, description: 'Items to skip, ≥ 0' }),
});

/** `limit` and `offset` for a list that is answered whole when neither is given. */
export const optionalPageQuery = () => ({
  limit: limit.optional().openapi({
    param: { name: 'limit', in: 'query' },
    description: 'Page size, 1–200; without `limit` and `offset`, the whole list',
    example: 50,
  }),
  offset: offset.optional().openapi({ ...offsetDoc, description: 'Items to skip, ≥ 0 (default 0 when `limit` is given)' }),
});
