import { z } from '@hono/zod-openapi';
import type { AnswerEvent } from '#retrieval/answer.ts';
import { passageJson, type Retrieval } from '#retrieval/retrieval.ts';
import type { App } from '../context.ts';
import { askedCollections } from '../schemas/collection-ids.ts';
import { json, jsonBody } from '../schemas/common.ts';
import { collectionErrors } from '../schemas/error.ts';
import { checkedFilter } from '../schemas/metadata.ts';
import {
  type QueryEvent,
  QueryEventSchema,
  QueryRequestSchema,
  SearchRequestSchema,
  SearchResponseSchema,
} from '../schemas/query.ts';
import { taggedRoutes } from './define-route.ts';

const route = taggedRoutes('Query', { errors: [...collectionErrors, 502] });

const search = route.post('/query/search', 'Retrieve sources without generating an answer', {
  operationId: 'search',
  access: 'query',
  rate: 'search',
  description: `The retrieval of \`POST /query/\` (same access rules, same namespace, the collection's
\`retrieval_strategy\`; several collections at once with \`collection_ids\`), answered as JSON. Hybrid dense+sparse (RRF) when an embedding model is
configured, else sparse BM25 alone. For search-only clients and retrieval benchmarks.`,
  request: { body: jsonBody(SearchRequestSchema) },
  responses: { 200: json(SearchResponseSchema, 'Sources, best first') },
});

const ask = route.post('/query', 'Ask a question; the answer streams as Server-Sent Events', {
  operationId: 'ask',
  access: 'query',
  rate: 'query',
  description: `Everything that can refuse the request is checked before the first byte: 422 for the
body, 403/404 for the collection (each of \`collection_ids\`, the first refused deciding), 404 for a \`session_id\`
that is not the caller's own session in it (in one of them).
Then \`text/event-stream\`, each event an \`event:\` line naming it, one \`data:\` line of JSON and a blank line. Read
as \`{event, data}\` with \`data\` parsed, each is a \`QueryEvent\` (the 200 response's \`x-sse-event\`), with its payload a
component of its own:

1. \`event: metadata\` — \`QueryMetadataEvent\`, \`{sources, embedding_latency_ms, retrieval_latency_ms, rerank}\`, before any token;
2. \`event: token\` — \`QueryTokenEvent\`, \`{token}\`, one per text delta of the model;
3. \`event: done\` — \`QueryDoneEvent\`, \`{generation_latency_ms, time_to_first_token_ms, evaluation_id}\`, both times from the
   start of generation (just before the model is called, after \`metadata\`), so they leave out auth and retrieval;
   \`evaluation_id\` names the answer's record, written before \`done\` is sent, to rate it with
   \`PUT /query/answers/{evaluation_id}/feedback\`;
   or, if generation fails after the stream began, \`event: error\` — \`QueryErrorEvent\`, \`{"message": "Generation failed"}\`.

The answer cites sources as \`[n]\`, the n-th entry of \`metadata.sources\`. A client that disconnects
stops generation; what was produced is still recorded. After the stream the exchange is saved (in the
session, when given) with an evaluation record that is scored asynchronously.`,
  request: { body: jsonBody(QueryRequestSchema) },
  responses: {
    200: {
      description: 'The answer as an event stream; each event, read as `{event, data}` with `data` parsed, is a `QueryEvent`',
      content: {
        'text/event-stream': {
          schema: z.string(),
          // OpenAPI 3.1 has no place for the events of a stream (3.2's `itemSchema` is not valid here): an extension.
          'x-sse-event': { $ref: '#/components/schemas/QueryEvent' },
        },
      },
    },
  },
});

export function registerQueryRoutes(app: App) {
  // Referenced only from the stream's `x-sse-event`, which the generator does not read: registered here.
  app.openAPIRegistry.register('QueryEvent', QueryEventSchema);
  app.openapi(ask, async (c) => {
    const body = c.req.valid('json');
    await c.var.services.usage.requireWithinCap(c.var.caller);
    // Aborted when the client goes away (the request's signal, or the response stream being
    // cancelled): generation stops with it, and what was produced is still recorded.
    const gone = new AbortController();
    c.req.raw.signal.addEventListener('abort', () => gone.abort());
    const answer = await c.var.services.answer.ask(
      c.var.caller,
      {
        question: body.question,
        collectionIds: askedCollections(body),
        sessionId: body.session_id || undefined,
        topK: body.top_k,
        rerank: body.rerank,
        filter: body.filter && checkedFilter(body.filter),
      },
      { signal: gone.signal, log: c.var.log },
    );
    // The events outlive this handler; the database must stay open until they end and the exchange is recorded.
    c.var.background(
      answer.recorded.catch((error: unknown) => c.var.log.error('exchange_not_recorded', error, { user_id: c.var.caller.id })),
    );
    // The body pulls one event at a time, so generation follows the client's pace, and a client
    // that leaves cancels the stream, which stops generation. A plain ReadableStream rather than
    // hono's streamSSE: that pipes every token through one more stream and a writer.
    const events = answer[Symbol.asyncIterator]();
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await events.next();
        if (next.done) return controller.close();
        if (next.value.type === 'error') c.var.log.error('generation_failed', next.value.cause, { user_id: c.var.caller.id });
        controller.enqueue(sseFrame(next.value));
      },
      async cancel() {
        gone.abort();
        await events.return?.(undefined);
      },
    });
    return c.body(stream, 200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
  });

  app.openapi(search, async (c) => {
    const body = c.req.valid('json');
    // A search spends tokens too (the question's embedding, a rerank): the same daily cap.
    await c.var.services.usage.requireWithinCap(c.var.caller);
    const collectionIds = askedCollections(body);
    const found = await c.var.services.retrieval.retrieve(c.var.caller, {
      question: body.question,
      collectionIds,
      topK: body.top_k,
      rerank: body.rerank,
      filter: body.filter && checkedFilter(body.filter),
    });
    c.var.background(
      c.var.services.usage
        .recordSearch(c.var.caller, { collectionId: collectionIds[0] ?? null, requestId: c.var.requestId }, found.usage)
        .catch((error: unknown) => c.var.log.error('usage_not_recorded', error, { user_id: c.var.caller.id })),
    );
    return c.json(retrievalJson(found), 200);
  });
}

function retrievalJson({
  passages,
  embeddingLatencyMs,
  retrievalLatencyMs,
  rerank,
}: Pick<Retrieval, 'passages' | 'embeddingLatencyMs' | 'retrievalLatencyMs' | 'rerank'>) {
  return {
    sources: passages.map(passageJson),
    embedding_latency_ms: embeddingLatencyMs,
    retrieval_latency_ms: retrievalLatencyMs,
    rerank: {
      applied: rerank.applied,
      reason: rerank.applied ? null : rerank.reason,
      candidates: rerank.applied ? rerank.candidates : null,
      latency_ms: rerank.latencyMs,
    },
  };
}

const encoder = new TextEncoder();

function sseFrame(event: AnswerEvent): Uint8Array {
  const { event: name, data } = toSse(event);
  // JSON.stringify leaves no line breaks in `data`, so each event is one `data:` line.
  return encoder.encode(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** An event as the description's `QueryEvent` has it, so that what is written cannot drift from what is described. */
function toSse(event: AnswerEvent): QueryEvent {
  switch (event.type) {
    case 'metadata':
      return { event: event.type, data: retrievalJson(event) };
    case 'token':
      return { event: event.type, data: { token: event.token } };
    case 'done':
      return {
        event: event.type,
        data: {
          generation_latency_ms: event.generationLatencyMs,
          time_to_first_token_ms: event.timeToFirstTokenMs,
          evaluation_id: event.evaluationId,
        },
      };
    case 'error':
      return { event: event.type, data: { message: event.message } };
  }
}
