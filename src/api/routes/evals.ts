import { z } from '@hono/zod-openapi';
import type { App } from '../context.ts';
import { ChatCollectionParams, json, jsonBody } from '../schemas/common.ts';
import { collectionErrors } from '../schemas/error.ts';
import {
  AnswerParams,
  EvalListQuery,
  EvaluationSchema,
  EvaluationStatsSchema,
  FeedbackRequestSchema,
  FeedbackSchema,
} from '../schemas/evals.ts';
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

const feedback = route.put('/query/answers/{evaluation_id}/feedback', 'Rate an answer (its asker only)', {
  operationId: 'rateAnswer',
  access: 'query',
  description: `Thumbs up or down on one of the caller's own answers, with an optional comment: \`evaluation_id\` is the
answer's, from the \`done\` event of \`POST /query/\` (or an assistant message of a chat session). A second PUT replaces the
rating; \`feedback: null\` takes it back (and its comment). The rating goes on the answer's evaluation record, so every
participant of the collection sees it there (\`feedback\`, \`feedback_comment\`), the stats count it, and the worst queries
put the answers rated down first. Anyone else's answer is 404, whatever their part in the collection; a key restricted
to one collection rates only the answers asked in that collection alone (403 otherwise).`,
  request: { params: AnswerParams, body: jsonBody(FeedbackRequestSchema) },
  responses: { 200: json(FeedbackSchema, 'The rating as stored') },
  errors: [403, 404],
});

export function registerEvalRoutes(app: App) {
  app.openapi(feedback, async (c) => {
    const { feedback, comment } = c.req.valid('json');
    const rated = await c.var.services.evals.rate(c.var.caller, c.req.valid('param').evaluation_id, {
      feedback,
      comment: comment ?? null,
    });
    return c.json(rated, 200);
  });
  app.openapi(list, async (c) =>
    c.json(await c.var.services.evals.list(c.var.caller, c.req.valid('param').collection_id, c.req.valid('query')), 200),
  );
  app.openapi(stats, async (c) =>
    c.json(await c.var.services.evals.stats(c.var.caller, c.req.valid('param').collection_id), 200),
  );
}
