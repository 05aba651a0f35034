import { z } from '@hono/zod-openapi';
import { JOB_STATUSES } from '#core/db/jobs.ts';
import { Id, pageQuery, pathParam, Timestamp } from './common.ts';
import { usageDay } from './usage.ts';

const count = (description: string) => z.number().int().openapi({ description });

export const AdminOverviewSchema = z
  .object({
    users: count('Accounts, anonymous ones included'),
    collections: count('Collections (not being deleted)'),
    documents: count('Documents in every collection and personal space (not being deleted)'),
    jobs: z.object({
      queued: count('Ingestion jobs waiting for their first step'),
      processing: count('Ingestion jobs under way'),
      stuck: count('Jobs unfinished and untouched for `stuck_after_minutes`: their messages were lost'),
      failed_last_24h: count('Jobs that failed in the last 24 hours'),
    }),
    dead_letters: z
      .object({
        count: count('Messages in QStash’s dead-letter queue: they failed every retry'),
        more: z.boolean().openapi({ description: 'True when the queue holds more than `count` (it is counted 1,000 at most)' }),
      })
      .nullable()
      .openapi({ description: 'Null when QStash could not be read (or no QSTASH_TOKEN is set); `GET /ready` says why' }),
    stuck_after_minutes: count('How long an unfinished job must be untouched to count as stuck'),
  })
  .openapi('AdminOverview');

export const AdminUsersQuery = z.object({
  since: usageDay('since', 'The usage window’s first day (UTC), included; default 29 days before `until`.'),
  until: usageDay('until', 'The usage window’s last day (UTC), included; default today.'),
  ...pageQuery(50),
});

export const AdminUserSchema = z
  .object({
    id: Id,
    email: z.string().nullable(),
    created_at: Timestamp,
    last_sign_in_at: Timestamp.nullable(),
    is_admin: z.boolean(),
    collections: count('Collections they own'),
    documents: count('Documents they added'),
    calls: count('Model calls in the window'),
    input_tokens: count('Tokens sent in the window'),
    output_tokens: count('Tokens generated in the window'),
    cost_usd: z.number().nullable().openapi({ description: 'From MODEL_PRICES; null without one, or a model without a price' }),
  })
  .openapi('AdminUser');

export const AdminJobsQuery = z.object({
  state: z
    .enum(['stuck', 'failed'])
    .openapi({ param: { name: 'state', in: 'query' }, description: '`stuck` (oldest first) or `failed` (newest first)' }),
  ...pageQuery(50),
});

export const AdminJobSchema = z
  .object({
    job_id: Id,
    user_id: Id,
    user_email: z.string().nullable(),
    collection_id: Id.nullable().openapi({ description: 'Null: the user’s personal space' }),
    collection_name: z.string().nullable(),
    document_id: Id.nullable(),
    source: z.string().openapi({ description: 'The file’s name or the page’s URL' }),
    status: z.enum(JOB_STATUSES),
    error_message: z.string().nullable(),
    chunks_processed: z.number().int(),
    chunks_total: z.number().int(),
    created_at: Timestamp,
    updated_at: Timestamp,
    retryable: z.boolean(),
    retry_note: z.string().nullable().openapi({ description: 'Why it cannot be retried; null when it can' }),
  })
  .openapi('AdminJob');

export const AdminJobParams = z.object({ id: pathParam('id', 'Job id') });

export const AdminRetrySchema = z
  .object({
    job_id: Id.openapi({ description: 'The job to watch: the same job when requeued, a new one when reingested' }),
    status: z.string(),
    retried: z.enum(['requeued', 'reingested']),
  })
  .openapi('AdminRetry');

export type AdminOverview = z.infer<typeof AdminOverviewSchema>;
export type AdminUserView = z.infer<typeof AdminUserSchema>;
export type AdminJobView = z.infer<typeof AdminJobSchema>;
