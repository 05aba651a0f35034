import { createRoute, z } from '@hono/zod-openapi';
import type { App } from '../context.ts';
import { json } from '../schemas/common.ts';

const health = createRoute({
  method: 'get',
  path: '/health',
  tags: ['System'],
  summary: 'Liveness check (public)',
  operationId: 'health',
  security: [],
  responses: { 200: json(z.object({ status: z.literal('ok') }), 'The worker is up') },
});

export function registerSystemRoutes(app: App) {
  app.openapi(health, (c) => c.json({ status: 'ok' as const }, 200));
}
