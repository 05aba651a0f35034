import { createRoute } from '@hono/zod-openapi';
import type { App } from '../context.ts';
import { json } from '../schemas/common.ts';
import { authErrors, errorResponses } from '../schemas/error.ts';
import { SearchRequestSchema, SearchResponseSchema } from '../schemas/query.ts';

const tags = ['Query'];

const search = createRoute({
  method: 'post',
  path: '/query/search',
  tags,
  summary: 'Retrieve sources without generating an answer',
  description: `The retrieval of \`POST /query/\` (same access rules, same namespace, the collection's
\`retrieval_strategy\`), answered as JSON. Hybrid dense+sparse (RRF) when an embedding model is
configured, else sparse BM25 alone. For search-only clients and retrieval benchmarks.`,
  request: { body: { required: true, content: { 'application/json': { schema: SearchRequestSchema } } } },
  responses: { 200: json(SearchResponseSchema, 'Sources, best first'), ...errorResponses(...authErrors, 403, 404, 502) },
});

export function registerQueryRoutes(app: App) {
  app.openapi(search, async (c) => {
    const { question, collection_id, top_k } = c.req.valid('json');
    const retrieval = await c.var.services.query.retrieve(c.var.caller, {
      question,
      collectionId: collection_id || undefined,
      topK: top_k,
    });
    const { sources, embedding_latency_ms, retrieval_latency_ms } = retrieval;
    return c.json({ sources, embedding_latency_ms, retrieval_latency_ms }, 200);
  });
}
