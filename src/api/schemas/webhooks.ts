import { z } from '@hono/zod-openapi';
import { ingestPayload, sourceSyncedPayload, webhookEvent } from '#core/webhooks/payload.ts';
import { Id, pageQuery, pathParam, plainText, Timestamp, text } from './common.ts';

export const WebhookEventSchema = webhookEvent.openapi('WebhookEvent');

const url = text({ min: 1, max: 2048 }).openapi({
  description:
    'Where events are POSTed: http or https on ports 80/443 and a host that resolves only to public addresses, ' +
    'or an origin the operator trusts for webhooks (WEBHOOK_TRUSTED_ORIGINS); never an origin trusted for URL ' +
    'ingestion only. Checked again at every delivery. Redirects are not followed.',
  example: 'https://example.com/hooks/rag',
});
const events = z.array(WebhookEventSchema).min(1);

const webhookFields = {
  id: Id,
  url: z.string(),
  events: z.array(WebhookEventSchema),
  collection_id: Id.nullable().openapi({ description: 'Only jobs in this collection; null: all the caller’s jobs' }),
  active: z.boolean().openapi({ description: 'A paused registration gets no deliveries' }),
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const WebhookSchema = z.object(webhookFields).openapi('Webhook');

export const CreatedWebhookSchema = z
  .object({
    ...webhookFields,
    secret: z.string().openapi({
      description:
        '`whsec_` and the base64 of 32 random bytes. Those bytes key `webhook-signature` (Standard Webhooks: ' +
        '`v1,<base64 HMAC-SHA-256 of "<webhook-id>.<webhook-timestamp>.<raw body>">`); the whole text keys ' +
        '`X-Service-Signature`, which covers the body only. Returned only here.',
      example: 'whsec_…',
    }),
  })
  .openapi('CreatedWebhook');

export const CreateWebhookSchema = z
  .object({ url, events, collection_id: plainText().nullish().openapi({ description: 'Only this collection’s jobs' }) })
  .strict()
  .openapi('CreateWebhook');

export const UpdateWebhookSchema = z
  .object({ url: url.optional(), events: events.optional(), active: z.boolean().optional() })
  .strict()
  .refine((body) => Object.keys(body).length > 0, 'Give at least one of url, events, active')
  .openapi('UpdateWebhook');

// The payloads are core's (src/core/webhooks/payload.ts); here they get their names and the delivery's headers.
// An ingest event is listed as any WebhookEvent, as it always was in this description.
export const WebhookPayloadSchema = ingestPayload.extend({ event: WebhookEventSchema }).openapi('WebhookPayload', {
  description:
    'The JSON body POSTed to a receiver when one of its user’s jobs ends. Headers, in the Standard Webhooks style: ' +
    '`webhook-id` (the delivery id, the same on every retry), `webhook-timestamp` (the attempt’s Unix seconds) and ' +
    '`webhook-signature` (`v1,` and the base64 HMAC-SHA-256 of `<webhook-id>.<webhook-timestamp>.<raw body>` under ' +
    'the bytes the secret encodes). Refuse a timestamp more than 5 minutes off and accept each `webhook-id` once: ' +
    'then a captured delivery cannot be replayed. Also `X-Service-Event`, and, as the interface contract has them, ' +
    '`X-Service-Signature` (`sha256=` and the hex HMAC-SHA-256 of the body alone under the secret’s text: it does ' +
    'not change between sends, so it cannot tell a replay) and `X-Service-Delivery` (`webhook-id` again, unsigned).',
});

export const SourceSyncedPayloadSchema = sourceSyncedPayload.openapi('SourceSyncedPayload', {
  description:
    'The JSON body POSTed when a sync of one of its user’s sources ends (`source.synced`), with the same headers and ' +
    'signatures as `WebhookPayload`. `counts` are the run’s (see `WebSourceRun`).',
});

const AttemptSchema = z.object({
  attempt: z.number().int(),
  at: Timestamp,
  response_status: z.number().int().nullable().openapi({ description: 'Null when the receiver gave no answer' }),
  error: z.string().nullable(),
  duration_ms: z.number().int(),
});

export const DeliverySchema = z
  .object({
    id: Id.openapi({ description: 'Sent as `webhook-id` (signed) and `X-Service-Delivery`' }),
    webhook_id: Id,
    job_id: Id.openapi({ description: 'The job; for `source.synced`, the sync run' }),
    source: z.string().openapi({ description: 'The job’s file name or URL; for `source.synced`, the source’s URL' }),
    event: WebhookEventSchema,
    status: z.enum(['pending', 'delivered', 'retrying', 'failed', 'skipped']).openapi({
      description:
        '`pending`: not attempted yet; `retrying`: an attempt failed and another is due at `next_retry_at`; ' +
        '`delivered`: a 2xx answer; `failed`: every attempt failed, or the URL is now refused; `skipped`: paused.',
    }),
    attempts: z.number().int(),
    response_status: z.number().int().nullable().openapi({ description: 'The last attempt’s HTTP status' }),
    last_error: z.string().nullable(),
    next_retry_at: Timestamp.nullable().openapi({
      description: 'When the queue retries, by its backoff (about 12 s, 2.5 min, 30 min, 6 h, 24 h); null when settled',
    }),
    attempts_log: z.array(AttemptSchema).openapi({ description: 'The last 20 attempts, oldest first' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('WebhookDelivery');

export const WebhookParams = z.object({ id: pathParam('id', 'Webhook id') });
export const DeliveryListQuery = z.object(pageQuery(50));
