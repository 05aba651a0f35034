import { z } from '@hono/zod-openapi';
import type { App } from '../context.ts';
import { AuditEntrySchema, AuditListQuery } from '../schemas/audit.ts';
import { json } from '../schemas/common.ts';
import { taggedRoutes } from './define-route.ts';

const route = taggedRoutes('Audit');

const list = route.get('/audit', 'Read the audit log', {
  operationId: 'listAuditEntries',
  access: 'bearer',
  description: `Security-relevant actions, newest first: API keys created and revoked; invite links created, revoked
and joined through; members removed; collections created and deleted, their config changed and re-chunked; webhooks
created, changed, deleted and their secrets rotated; sources added and removed; documents deleted. Each entry names
who acted (and the API key, if one was used), the request (\`X-Request-Id\`) and the client's address, the target,
and what changed. With \`collection_id\`, that collection's entries, whoever made them: its owner's to read (a
member gets 403, and a collection that does not exist, or no longer does, is 404); without it, the entries you made.
An admin reads every collection's entries, and without \`collection_id\` every entry (a deleted collection's among
them). Filter by \`action\` and by time (\`since\` inclusive,
\`until\` exclusive). Entries cannot be changed or deleted through the API; they are kept for the deployment's
AUDIT_RETENTION_DAYS (default 365), then removed. Bearer tokens only: the log is for people answering for an
account, and a key (often held by a program, and leaked with it) reading who did what would widen what a leaked
key tells.`,
  request: { query: AuditListQuery },
  responses: { 200: json(z.array(AuditEntrySchema), 'Entries, newest first') },
  errors: [404],
});

export function registerAuditRoutes(app: App) {
  app.openapi(list, async (c) => c.json(await c.var.services.audit.list(c.var.caller, c.req.valid('query')), 200));
}
