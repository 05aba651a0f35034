import { z } from '@hono/zod-openapi';
import { AUDIT_ACTIONS, AUDIT_TARGETS } from '../services/audit.ts';
import { Id, pageQuery, plainText, Timestamp } from './common.ts';

export const AuditActionSchema = z.enum(AUDIT_ACTIONS).openapi('AuditAction');

const time = (name: string, description: string) =>
  z.iso
    .datetime({ offset: true })
    .optional()
    .openapi({ param: { name, in: 'query' }, description, example: '2026-11-01T00:00:00Z' });

export const AuditListQuery = z.object({
  collection_id: plainText()
    .optional()
    .openapi({
      param: { name: 'collection_id', in: 'query' },
      description: 'This collection’s entries (its owner, or an admin). Omitted: your own entries (an admin: everyone’s).',
    }),
  action: AuditActionSchema.optional().openapi({ param: { name: 'action', in: 'query' } }),
  since: time('since', 'Entries at or after this time (ISO 8601)'),
  until: time('until', 'Entries before this time (ISO 8601)'),
  ...pageQuery(50),
});

export const AuditEntrySchema = z
  .object({
    id: Id,
    created_at: Timestamp,
    actor_id: Id.openapi({ description: 'The user who acted (a key’s owner when a key was used)' }),
    api_key_id: Id.nullable().openapi({ description: 'The API key the request carried; null for a bearer token' }),
    request_id: z.string().openapi({ description: 'The request’s `X-Request-Id`' }),
    client_address: z
      .string()
      .nullable()
      .openapi({ description: 'The client’s address as Cloudflare gives it (`CF-Connecting-IP`); null without one' }),
    action: AuditActionSchema,
    target_type: z.enum(AUDIT_TARGETS).openapi({ description: 'What the action was done to; `user` for a member removed' }),
    target_id: z.string(),
    collection_id: Id.nullable().openapi({ description: 'The collection the target belongs to; null for none' }),
    diff: z.record(z.string(), z.unknown()).openapi({
      description:
        'What was set (`{field: value}`) or changed (`{field: {from, to}}`); never a key, a secret, a share token or a ' +
        'password, and a webhook’s address by its origin only (`url_origin`; `url_changed` when its path or query changed).',
    }),
  })
  .openapi('AuditEntry');
