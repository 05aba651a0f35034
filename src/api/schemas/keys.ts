import { z } from '@hono/zod-openapi';
import { SCOPES } from '#core/caller.ts';
import { Id, pathParam, plainText, Timestamp, text } from './common.ts';

export const ScopeSchema = z.enum(SCOPES).openapi('Scope', {
  description:
    '`query`: ask and search, chat sessions. `ingest`: upload, ingest URLs, jobs, delete documents. ' +
    '`collections:read`: list collections, documents and evaluations. `collections:write`: create and delete collections.',
});

const keyFields = {
  id: Id.openapi({ description: 'Used as `{id}` to revoke the key' }),
  name: z.string(),
  prefix: z.string().openapi({
    description: 'The key’s first 12 characters, kept in clear so that you can tell keys apart; not enough to use it',
    example: 'rag_Xk3p9QzA',
  }),
  scopes: z.array(ScopeSchema),
  collection_id: Id.nullable().openapi({
    description: 'The one collection the key may use; null: every collection its owner may use',
  }),
  expires_at: Timestamp.nullable().openapi({ description: 'After this the key is refused (401 `API key expired`); null: never' }),
  last_used_at: Timestamp.nullable().openapi({ description: 'Updated at most once a minute; null: never used' }),
  created_at: Timestamp,
};

export const ApiKeySchema = z.object(keyFields).openapi('ApiKey');

export const CreatedApiKeySchema = z
  .object({
    ...keyFields,
    key: z.string().openapi({
      description:
        'The key, sent as `X-API-Key`: `rag_` and 256 random bits, base64url. Returned only here: the service keeps ' +
        'only its SHA-256, so store it now.',
      example: 'rag_Xk3p9QzA…',
    }),
  })
  .openapi('CreatedApiKey');

export const CreateApiKeySchema = z
  .object({
    name: text({ min: 1, max: 100 }).openapi({ example: 'nightly sync' }),
    scopes: z
      .array(ScopeSchema)
      .min(1)
      .openapi({ example: ['ingest', 'query'] }),
    collection_id: plainText()
      .nullish()
      .openapi({ description: 'Restrict the key to this collection, which you must own or be a member of' }),
    expires_at: z.iso.datetime({ offset: true }).nullish().openapi({
      description: 'Optional: when the key stops working, an ISO 8601 time in the future',
      example: '2027-01-31T00:00:00Z',
    }),
  })
  .strict()
  .openapi('CreateApiKey');

export const KeyParams = z.object({ id: pathParam('id', 'API key id') });
