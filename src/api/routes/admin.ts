import { z } from '@hono/zod-openapi';
import type { App } from '../context.ts';
import {
  AdminJobParams,
  AdminJobSchema,
  AdminJobsQuery,
  AdminOverviewSchema,
  AdminRetrySchema,
  AdminUserSchema,
  AdminUsersQuery,
} from '../schemas/admin.ts';
import { json } from '../schemas/common.ts';
import { taggedRoutes } from './define-route.ts';

const route = taggedRoutes('Admin');
const ADMINS_ONLY =
  'For administrators (a bearer token whose `app_metadata.is_admin` is true): anyone else gets 403, whatever they own.';

const overview = route.get('/admin/overview', 'The deployment at a glance', {
  operationId: 'getAdminOverview',
  access: 'bearer',
  description: `Accounts, collections and documents; ingestion jobs queued, under way, stuck and failed in the last day; and
the size of QStash's dead-letter queue (null when it could not be read within 2 s). ${ADMINS_ONLY}`,
  responses: { 200: json(AdminOverviewSchema, 'Counts') },
});

const users = route.get('/admin/users', 'Users and their usage', {
  operationId: 'listAdminUsers',
  access: 'bearer',
  description: `Every account with the collections and documents it owns and its model usage over \`since\`…\`until\`
(as \`GET /usage\` counts it, priced with MODEL_PRICES when set); most tokens first, then newest. ${ADMINS_ONLY}`,
  request: { query: AdminUsersQuery },
  responses: { 200: json(z.array(AdminUserSchema), 'Users') },
});

const jobs = route.get('/admin/jobs', 'Stuck or failed ingestion jobs, of every user', {
  operationId: 'listAdminJobs',
  access: 'bearer',
  description: `\`state=stuck\`: jobs queued or processing and untouched for 15 minutes (their steps take seconds; the
messages were lost or are in the dead-letter queue), oldest first. The cron sweep retries these on its own after
INGEST_SWEEP_AFTER_MINUTES. \`state=failed\`: failed jobs, newest first, with their error. Each says whether it can be
retried. ${ADMINS_ONLY}`,
  request: { query: AdminJobsQuery },
  responses: { 200: json(z.array(AdminJobSchema), 'Jobs') },
});

const retry = route.post('/admin/jobs/{id}/retry', 'Retry a stuck or failed job', {
  operationId: 'retryAdminJob',
  access: 'bearer',
  description: `A stuck job's first step is queued again (\`retried: requeued\`, the same job): every step is idempotent,
so it goes on from what is done, as the cron sweep would later. A failed job from a URL is ingested again as a new job
of its owner, with their access and daily quota (\`retried: reingested\`). A failed upload cannot be retried (its
original was removed when it failed), nor can a job that is neither stuck nor failed: 409. Audited as \`job.retried\`.
${ADMINS_ONLY}`,
  request: { params: AdminJobParams },
  responses: { 202: json(AdminRetrySchema, 'Retried') },
  errors: [404, 409, 503],
});

export function registerAdminRoutes(app: App) {
  app.openapi(overview, async (c) => c.json(await c.var.services.admin.overview(c.var.caller), 200));
  app.openapi(users, async (c) => c.json(await c.var.services.admin.users(c.var.caller, c.req.valid('query')), 200));
  app.openapi(jobs, async (c) => c.json(await c.var.services.admin.jobs(c.var.caller, c.req.valid('query')), 200));
  app.openapi(retry, async (c) => c.json(await c.var.services.admin.retry(c.var.caller, c.req.valid('param').id), 202));
}
