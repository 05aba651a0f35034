import { z } from '@hono/zod-openapi';
import type { App } from '../context.ts';
import { json, jsonBody } from '../schemas/common.ts';
import {
  CreatedWebhookSchema,
  CreateWebhookSchema,
  DeliveryListQuery,
  DeliverySchema,
  SourceSyncedPayloadSchema,
  UpdateWebhookSchema,
  WebhookParams,
  WebhookPayloadSchema,
  WebhookSchema,
} from '../schemas/webhooks.ts';
import { taggedRoutes } from './define-route.ts';

const route = taggedRoutes('Webhooks');

const create = route.post('/webhooks', 'Register a webhook', {
  operationId: 'createWebhook',
  access: 'bearer',
  description: `When one of your ingest jobs ends, the service POSTs its \`WebhookPayload\` to \`url\` for each event you
asked for (\`ingest.succeeded\`, \`ingest.failed\`, \`ingest.partial\`), and when a sync of one of your sources ends, a
\`SourceSyncedPayload\` (\`source.synced\`); optionally only for jobs and sources in \`collection_id\` (which
you must be able to use: 403, or 404 if there is no such collection). Every attempt is signed in the Standard
Webhooks style: \`webhook-signature: v1,<base64 HMAC-SHA-256 of "<webhook-id>.<webhook-timestamp>.<raw body>">\` under the
bytes the secret encodes, with \`webhook-id\` the same on every retry; the contract's \`X-Service-Signature:
sha256=<hex HMAC-SHA-256 of the raw body>\` is sent too, but covers the body only and cannot tell a replay (see
\`WebhookPayload\`). A 2xx answer within 10 s delivers it; anything else is retried by the queue with backoff, 5 times
over about 31 hours. Redirects are not followed. The URL must pass the URL-ingestion address rules, with the
operator's WEBHOOK_TRUSTED_ORIGINS as the only exemptions (an origin trusted for URL ingestion only is refused): 422
with the reason, now and at every delivery. A slow or failing receiver never delays ingestion or changes a job. The
\`secret\` is in this answer only. At most 20 webhooks per user (409).`,
  request: { body: jsonBody(CreateWebhookSchema) },
  responses: { 200: json(CreatedWebhookSchema, 'The registration, with its secret') },
  errors: [404, 409],
});

const list = route.get('/webhooks', 'List your webhooks', {
  operationId: 'listWebhooks',
  access: 'bearer',
  description: 'Newest first, without their secrets.',
  responses: { 200: json(z.array(WebhookSchema), 'Webhooks') },
});

const update = route.patch('/webhooks/{id}', 'Change a webhook', {
  operationId: 'updateWebhook',
  access: 'bearer',
  description:
    'Any of `url` (checked again, 422 if refused), `events` and `active` (false pauses it: deliveries due meanwhile are ' +
    '`skipped`). Anyone else’s webhook is 404.',
  request: { params: WebhookParams, body: jsonBody(UpdateWebhookSchema) },
  responses: { 200: json(WebhookSchema, 'The webhook as it is now') },
  errors: [404],
});

const remove = route.delete('/webhooks/{id}', 'Delete a webhook', {
  operationId: 'deleteWebhook',
  access: 'bearer',
  description: 'With its delivery records; deliveries not yet made are dropped. Anyone else’s webhook is 404.',
  request: { params: WebhookParams },
  responses: { 200: json(z.object({ deleted: z.string() }), 'The deleted webhook’s id') },
  errors: [404],
});

const rotateSecret = route.post('/webhooks/{id}/rotate-secret', 'Replace a webhook’s signing secret', {
  operationId: 'rotateWebhookSecret',
  access: 'bearer',
  description:
    'For a secret that may have leaked. The new `secret` is in this answer only, and signs every attempt from now on, ' +
    'retries of earlier deliveries included; the old one signs nothing more. Anyone else’s webhook is 404.',
  request: { params: WebhookParams },
  responses: { 200: json(CreatedWebhookSchema, 'The webhook, with its new secret') },
  errors: [404],
});

const deliveries = route.get('/webhooks/{id}/deliveries', 'Recent deliveries of a webhook', {
  operationId: 'listWebhookDeliveries',
  access: 'bearer',
  description:
    'Newest first: each event sent, with its status, the last response code and error, how many attempts were made ' +
    '(the last 20 of them itemised), and when the next retry is due. Anyone else’s webhook is 404.',
  request: { params: WebhookParams, query: DeliveryListQuery },
  responses: { 200: json(z.array(DeliverySchema), 'Deliveries') },
  errors: [404],
});

/** What a receiver gets: an OpenAPI 3.1 webhook, so that the description (and the typed client) has its body. */
const jobEnded = {
  method: 'post' as const,
  path: 'ingest-job-ended',
  tags: ['Webhooks'],
  operationId: 'ingestJobEnded',
  summary: 'An ingest job ended (sent to your receiver)',
  description: `POSTed to each active registration that asked for the event. Headers: \`webhook-id\` (the same on every
retry), \`webhook-timestamp\`, \`webhook-signature: v1,<base64>\` (Standard Webhooks: HMAC-SHA-256 of
"<webhook-id>.<webhook-timestamp>.<raw body>" under the bytes the secret encodes; refuse a timestamp more than 5 minutes
off and accept each id once), \`X-Service-Event\`, and the contract's body-only \`X-Service-Signature: sha256=<hex>\` and
unsigned \`X-Service-Delivery\`. Answer 2xx within 10 s; anything else is retried (5 times, over about 31 hours).`,
  request: { body: jsonBody(WebhookPayloadSchema) },
  responses: { 200: { description: 'Received (any 2xx)' } },
};

const sourceSynced = {
  ...jobEnded,
  path: 'source-synced',
  tags: ['Webhooks', 'Sources'],
  operationId: 'sourceSynced',
  summary: 'A sync of a source ended (sent to your receiver)',
  description: `POSTed, as \`ingest-job-ended\` is, with the same headers and signatures, to each active registration that asked
for \`source.synced\`, when a sync of one of its user's sources ends, whatever its status.`,
  request: { body: jsonBody(SourceSyncedPayloadSchema) },
};

export function registerWebhookRoutes(app: App) {
  app.openAPIRegistry.registerWebhook(jobEnded);
  app.openAPIRegistry.registerWebhook(sourceSynced);
  app.openapi(create, async (c) => c.json(await c.var.services.webhooks.create(c.var.caller, c.req.valid('json')), 200));
  app.openapi(list, async (c) => c.json(await c.var.services.webhooks.list(c.var.caller), 200));
  app.openapi(update, async (c) =>
    c.json(await c.var.services.webhooks.update(c.var.caller, c.req.valid('param').id, c.req.valid('json')), 200),
  );
  app.openapi(remove, async (c) =>
    c.json({ deleted: await c.var.services.webhooks.delete(c.var.caller, c.req.valid('param').id) }, 200),
  );
  app.openapi(rotateSecret, async (c) =>
    c.json(await c.var.services.webhooks.rotateSecret(c.var.caller, c.req.valid('param').id), 200),
  );
  app.openapi(deliveries, async (c) =>
    c.json(await c.var.services.webhooks.deliveries(c.var.caller, c.req.valid('param').id, c.req.valid('query')), 200),
  );
}
