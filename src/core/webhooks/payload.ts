import { z } from 'zod';

/**
 * What a receiver is POSTed, one schema for each kind of event: the OpenAPI description shows it
 * (src/api/schemas/webhooks.ts names it), the ingest worker sends it, and test/unit/webhook-payload.test.ts
 * parses what the SQL that writes it builds (src/core/db/job-endings.ts, src/core/db/source-runs.ts).
 * Plain zod with `.meta()`, which the OpenAPI generator reads, so that the workers need no OpenAPI library.
 */

export const INGEST_EVENTS = ['ingest.succeeded', 'ingest.failed', 'ingest.partial'] as const;
export const WEBHOOK_EVENTS = [...INGEST_EVENTS, 'source.synced'] as const;
export const webhookEvent = z.enum(WEBHOOK_EVENTS);
export type WebhookEvent = z.infer<typeof webhookEvent>;

const uuid = z.string().meta({ format: 'uuid', example: '3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f' });
const timestamp = z.string().meta({ format: 'date-time', example: '2026-11-21T22:33:00.000Z' });
const count = z.number().int();

/** An ingest job's ending (`ingest.*`). */
export const ingestPayload = z.object({
  event: z.enum(INGEST_EVENTS),
  job_id: uuid,
  collection_id: uuid.nullable().meta({ description: 'Null for the personal namespace' }),
  document_id: uuid.nullable().meta({ description: 'Null when a failed or cancelled job’s document is gone' }),
  source: z.string().meta({ description: 'File name or URL' }),
  chunks_total: count,
  error_message: z.string().nullable(),
  occurred_at: timestamp,
});

/** A sync's ending (`source.synced`). */
export const sourceSyncedPayload = z.object({
  event: z.literal('source.synced'),
  run_id: uuid.meta({ description: 'The sync (`GET /sources/{id}/runs`); a delivery lists it as its `job_id`' }),
  source_id: uuid,
  collection_id: uuid.nullable().meta({ description: 'Null for the personal namespace' }),
  source: z.string().meta({ description: 'The source’s URL' }),
  status: z.enum(['succeeded', 'partial', 'failed', 'cancelled']),
  message: z.string().nullable(),
  counts: z.object({
    found: count,
    fetched: count,
    added: count,
    changed: count,
    unchanged: count,
    failed: count,
    skipped: count,
    gone: count,
    removed: count,
  }),
  occurred_at: timestamp,
});

export type IngestPayload = z.infer<typeof ingestPayload>;
export type SourceSyncedPayload = z.infer<typeof sourceSyncedPayload>;
export type WebhookPayload = IngestPayload | SourceSyncedPayload;
