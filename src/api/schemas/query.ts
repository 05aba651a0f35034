import { z } from '@hono/zod-openapi';
import { SourceSchema } from './chat.ts';
import { OptionalCollectionId, plainText, text } from './common.ts';

/** What a search and a question share. A question may run over several lines; white space alone is no question. */
const asked = {
  question: text({ min: 1, max: 5000, multiline: true }).openapi({ example: 'How does a tidal barrage work?' }),
  collection_id: OptionalCollectionId,
};
const topK = (does: string) =>
  z
    .number()
    .int()
    .min(1)
    .max(50)
    .default(5)
    .openapi({ description: `Sources to ${does}, 1–50 (default 5)` });

export const SearchRequestSchema = z.object({ ...asked, top_k: topK('return') }).openapi('SearchRequest');

export const SearchResponseSchema = z
  .object({
    sources: z.array(SourceSchema),
    embedding_latency_ms: z.number().int().openapi({ description: '0 when no dense embedding model is configured' }),
    retrieval_latency_ms: z.number().int(),
  })
  .openapi('SearchResponse');

export const QueryRequestSchema = z
  .object({
    ...asked,
    session_id: plainText()
      .nullish()
      .openapi({ description: 'The caller’s own session in this collection; the exchange is appended to it.' }),
    top_k: topK('retrieve'),
  })
  .openapi('QueryRequest');
