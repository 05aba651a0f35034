import type { App } from '../context.ts';
import { json } from '../schemas/common.ts';
import { collectionErrors } from '../schemas/error.ts';
import { UsageQuery, UsageSchema } from '../schemas/usage.ts';
import { taggedRoutes } from './define-route.ts';

const route = taggedRoutes('Usage', { errors: collectionErrors });

const read = route.get('/usage', 'Model usage per day: tokens, calls and, with a price table, cost', {
  operationId: 'getUsage',
  access: 'bearer',
  description: `What the models were asked to do, per UTC day, grouped by \`user\`, \`key\`, \`collection\` or \`model\`
(\`group_by\`, default \`model\`), over \`since\`…\`until\` (both included; default the last 30 days; at most 366).
Recorded where it happens, from each provider's own report: every answer's input and output tokens (the stream's
usage), the question's embedding (and a search's), the reranker's calls and passages, an upload's embeddings and
image descriptions, and the scoring's judge (or embedding) calls. Every row carries its user, collection and
request id (an upload's: the request that queued it; a scoring's: its answer's), and the API key it was made with,
if any: an answer's and a search's key, a scoring's its answer's, and an ingested document's the key of the
upload, URL, new version or re-chunk that queued it (a source's sync: its owner's key that started it; a
scheduled sync has none).

- Without \`collection_id\`: the caller's own usage; an administrator's call reads everyone's.
- With \`collection_id\`: everything spent in that collection, by every participant: its owner (and an administrator)
  only; a member is 403, a collection that does not exist 404.

With the deployment's price table (\`MODEL_PRICES\`) each row and the totals carry \`cost_usd\`; without one, tokens
only. \`daily_token_cap\` is the deployment's \`DAILY_TOKENS_PER_USER\`: past it, \`POST /query/\` and
\`POST /query/search\` answer 429 \`token_cap_exceeded\` until 00:00 UTC.`,
  request: { query: UsageQuery },
  responses: { 200: json(UsageSchema, 'Usage per day and group, and its totals') },
});

export function registerUsageRoutes(app: App) {
  app.openapi(read, async (c) => c.json(await c.var.services.usage.read(c.var.caller, c.req.valid('query')), 200));
}
