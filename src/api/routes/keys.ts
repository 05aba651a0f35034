import { z } from '@hono/zod-openapi';
import { MAX_API_KEYS_PER_USER } from '#core/limits.ts';
import type { App } from '../context.ts';
import { json, jsonBody } from '../schemas/common.ts';
import { ApiKeySchema, CreateApiKeySchema, CreatedApiKeySchema, KeyParams } from '../schemas/keys.ts';
import { taggedRoutes } from './define-route.ts';

const route = taggedRoutes('API keys');

const create = route.post('/keys', 'Create an API key', {
  operationId: 'createApiKey',
  access: 'bearer',
  description: `A key authenticates as you (send it as \`X-API-Key\`), limited to its \`scopes\` and, with \`collection_id\`, to
that one collection; it never gets more than you have at the moment it is used (a membership you lose, it loses). It
never carries operator rights, and it cannot manage keys, webhooks, sharing or membership. The key is in this answer
only. \`expires_at\` must be in the future (422). A restriction to a collection you cannot use is 403 (404 if there is no such
collection). One user holds at most ${MAX_API_KEYS_PER_USER} active keys (neither revoked nor expired): past that, 409 until you
revoke one. Keys never add to your rate limits: every request counts against you, whichever key or token carries it.`,
  request: { body: jsonBody(CreateApiKeySchema) },
  responses: { 200: json(CreatedApiKeySchema, 'The key, shown once') },
  errors: [404, 409],
});

const list = route.get('/keys', 'List your API keys', {
  operationId: 'listApiKeys',
  access: 'bearer',
  description: 'Keys not revoked, newest first, expired ones included. Never the key or its hash.',
  responses: { 200: json(z.array(ApiKeySchema), 'Keys') },
});

const revoke = route.delete('/keys/{id}', 'Revoke an API key', {
  operationId: 'revokeApiKey',
  access: 'bearer',
  description: 'The key is refused from now on (401 `API key revoked`). Anyone else’s key, or one already revoked, is 404.',
  request: { params: KeyParams },
  responses: { 200: json(z.object({ revoked: z.string() }), 'The revoked key’s id') },
  errors: [404],
});

export function registerKeyRoutes(app: App) {
  app.openapi(create, async (c) => c.json(await c.var.services.apiKeys.create(c.var.caller, c.req.valid('json')), 200));
  app.openapi(list, async (c) => c.json(await c.var.services.apiKeys.list(c.var.caller), 200));
  app.openapi(revoke, async (c) =>
    c.json({ revoked: await c.var.services.apiKeys.revoke(c.var.caller, c.req.valid('param').id) }, 200),
  );
}
