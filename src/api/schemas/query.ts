import { z } from '@hono/zod-openapi';
import { SourceSchema } from './chat.ts';

export const SearchRequestSchema = z
  .object({
    question: z.string().min(1).max(5000).openapi({ example: 'How does a tidal barrage work?' }),
    collection_id: z.string().nullish().openapi({ description: 'Omitted, null or empty: the caller’s personal namespace.' }),
    top_k: z.number().int().min(1).max(50).default(5).openapi({ description: 'Sources to return, 1–50 (default 5)' }),
  })
  .openapi('SearchRequest');

export const SearchResponseSchema = z
  .object({
    sources: z.array(SourceSchema),
    embedding_latency_ms: z.number().int().openapi({ description: '0 when no dense embedding model is configured' }),
    retrieval_latency_ms: z.number().int(),
  })
  .openapi('SearchResponse');

export const QueryRequestSchema = z
  .object({
    question: z.string().min(1).max(5000).openapi({ example: 'How does a tidal barrage work?' }),
    collection_id: z.string().nullish().openapi({ description: 'Omitted, null or empty: the caller’s personal namespace.' }),
    session_id: z
      .string()
      .nullish()
      .openapi({ description: 'The caller’s own session in this collection; the exchange is appended to it.' }),
    top_k: z.number().int().min(1).max(50).default(5).openapi({ description: 'Sources to retrieve, 1–50 (default 5)' }),
  })
  .openapi('QueryRequest');
