import { z } from '@hono/zod-openapi';
import { SourceSchema } from './chat.ts';
import { CollectionIds, oneScope } from './collection-ids.ts';
import { OptionalCollectionId, plainText, text } from './common.ts';
import { FilterSchema } from './metadata.ts';

/** What a search and a question share. A question may run over several lines; white space alone is no question. */
const asked = {
  question: text({ min: 1, max: 5000, multiline: true }).openapi({ example: 'How does a tidal barrage work?' }),
  collection_id: OptionalCollectionId,
  collection_ids: CollectionIds,
  filter: FilterSchema.optional(),
  rerank: z
    .boolean()
    .optional()
    .openapi({
      description:
        'Rerank the best fused candidates with the reranking model (RERANK_MODEL) before the strategy picks the sources: ' +
        '`true` or `false` for this request; unset: as the collection’s config says (`rerank`, off by default). ' +
        'A reranker that is not configured, fails or takes longer than its time budget never fails the request: ' +
        'the sources keep the fused order, and `rerank.applied` is false with the reason.',
    }),
};
const topK = (does: string) =>
  z
    .number()
    .int()
    .min(1)
    .max(50)
    .default(5)
    .openapi({ description: `Sources to ${does}, 1–50 (default 5)` });

export const SearchRequestSchema = z
  .object({ ...asked, top_k: topK('return') })
  .superRefine(oneScope)
  .openapi('SearchRequest');

export const RerankInfoSchema = z
  .object({
    applied: z.boolean().openapi({ description: 'Whether the sources are in the reranker’s order' }),
    reason: z.string().nullable().openapi({
      description: 'Why not, when not applied: `off`, no reranking model configured, it failed, or it took too long',
      example: 'off',
    }),
    candidates: z.number().int().nullable().openapi({ description: 'How many of the best fused candidates were reranked' }),
    latency_ms: z.number().int().nullable().openapi({
      description: 'Time spent waiting for the reranker; null when it was not asked. Not part of `retrieval_latency_ms`.',
    }),
  })
  .openapi('RerankInfo');

export const SearchResponseSchema = z
  .object({
    sources: z.array(SourceSchema),
    embedding_latency_ms: z.number().int().openapi({ description: '0 when no dense embedding model is configured' }),
    retrieval_latency_ms: z.number().int(),
    rerank: RerankInfoSchema,
  })
  .openapi('SearchResponse');

export const QueryRequestSchema = z
  .object({
    ...asked,
    session_id: plainText()
      .nullish()
      .openapi({
        description:
          'The caller’s own session in this collection, or with `collection_ids` in one of them (a session lives in ' +
          'one collection and may search others); the exchange is appended to it.',
      }),
    top_k: topK('retrieve'),
  })
  .superRefine(oneScope)
  .openapi('QueryRequest');

/*
 * The events of `POST /query/` (text/event-stream). Each payload is a component of its own; `QueryEvent`
 * is one event as a client reads it: the `event:` field and its `data:` line parsed as JSON. The handler
 * writes `QueryEvent`s (routes/query.ts, `toSse`), so the description and the stream cannot drift apart.
 */

export const QueryMetadataEventSchema = SearchResponseSchema.openapi('QueryMetadataEvent', {
  description: '`event: metadata`, first and once: the sources the answer may cite as `[n]` (the n-th, from 1), best first.',
});

export const QueryTokenEventSchema = z
  .object({ token: z.string().openapi({ description: 'The next piece of the answer: append it to what came before' }) })
  .openapi('QueryTokenEvent', { description: '`event: token`, one per text delta of the model.' });

export const QueryDoneEventSchema = z
  .object({
    generation_latency_ms: z.number().int(),
    time_to_first_token_ms: z.number().int(),
    evaluation_id: z
      .string()
      .nullable()
      .openapi({
        description:
          'The answer’s evaluation record, written before this event: rate it with `PUT /query/answers/{evaluation_id}/feedback`. ' +
          'Null when it could not be recorded.',
      }),
  })
  .openapi('QueryDoneEvent', {
    description:
      '`event: done`, last, when the answer is complete. Both times run from the start of generation (after `metadata`).',
  });

export const QueryErrorEventSchema = z
  .object({ message: z.string().openapi({ example: 'Generation failed' }) })
  .openapi('QueryErrorEvent', {
    description: '`event: error`, last, instead of `done`, when generation fails after the stream began.',
  });

export const QueryEventSchema = z
  .discriminatedUnion('event', [
    z.object({ event: z.literal('metadata'), data: QueryMetadataEventSchema }),
    z.object({ event: z.literal('token'), data: QueryTokenEventSchema }),
    z.object({ event: z.literal('done'), data: QueryDoneEventSchema }),
    z.object({ event: z.literal('error'), data: QueryErrorEventSchema }),
  ])
  .openapi('QueryEvent', {
    description:
      'One Server-Sent Event of `POST /query/`: `event` is its `event:` field, `data` its one `data:` line parsed as JSON.',
  });

export type QueryEvent = z.infer<typeof QueryEventSchema>;
