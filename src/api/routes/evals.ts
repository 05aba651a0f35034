import { z } from '@hono/zod-openapi';
import type { App } from '../context.ts';
import { ChatCollectionParams, json } from '../schemas/common.ts';
import { collectionErrors } from '../schemas/error.ts';
import { EvalListQuery, EvaluationSchema, EvaluationStatsSchema } from '../schemas/evals.ts';
import { taggedRoutes } from './define-route.ts';

const route = taggedRoutes('Evaluations', { errors: collectionErrors });

const list = route.get('/evals/{collection_id}', 'List the collection’s evaluation records', {
  operationId: 'listEvaluations',
  access: 'collections:read',
  description: `One record per answered question in the collection, by any participant, newest first
(\`created_at\`, then \`id\`, descending). For the owner and members; anyone else is 403.
**Every participant sees every participant's records**, questions and answers included, as the contract's
access rule for evaluations (owner or member) has it; records carry no user id, but a question asked in
a shared collection is visible to everyone in it, so ask private questions in a collection of your own.
Scores are filled in asynchronously after the answer: both scores null with \`scorer_error\` null means
not scored yet; \`scorer_error\` set means scoring failed and the scores stay null. Besides the contract's
fields a record carries \`embedding_latency_ms\`, \`time_to_first_token_ms\` and \`scorer\`; it leaves out the
sources and the chat session (sessions are private to their owner). A question over several collections
(\`collection_ids\`) is listed under its session's collection, else the first it searched, and only to a
participant of every collection it searched, never through a key restricted to one collection.`,
  request: { params: ChatCollectionParams, query: EvalListQuery },
  responses: { 200: json(z.array(EvaluationSchema), 'Evaluation records') },
});

const stats = route.get('/evals/{collection_id}/stats', 'Aggregate the collection’s recent evaluations', {
  operationId: 'getEvaluationStats',
  access: 'collections:read',
  description: `Computed over the 500 most recent evaluation records of the collection. A record counts as
scored when it has both scores; score averages, the daily trend's averages and the worst queries use
scored records only, latency averages use every record (generation latency: those whose generation
finished). An average over no records is null; an empty collection gives zero counts, null averages and
empty arrays. For the owner and members; anyone else is 403. The aggregate covers every participant's
questions, and its worst queries show their text to every participant; the records of questions over several
collections count only for a participant of each of them, as in the listing.`,
  request: { params: ChatCollectionParams },
  responses: { 200: json(EvaluationStatsSchema, 'Evaluation stats') },
});

export function registerEvalRoutes(app: App) {
  app.openapi(list, async (c) =>
    c.json(await c.var.services.evals.list(c.var.caller, c.req.valid('param').collection_id, c.req.valid('query')), 200),
  );
  app.openapi(stats, async (c) =>
    c.json(await c.var.services.evals.stats(c.var.caller, c.req.valid('param').collection_id), 200),
  );
}
