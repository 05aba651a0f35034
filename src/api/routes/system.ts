import { createRoute, z } from '@hono/zod-openapi';
import type { App } from '../context.ts';
import { readyAccess } from '../middleware/ready-access.ts';
import { json } from '../schemas/common.ts';
import { ErrorSchema, errorResponses } from '../schemas/error.ts';
import { ReadinessSchema } from '../schemas/system.ts';
import { checkReadiness } from '../services/readiness.ts';

const health = createRoute({
  method: 'get',
  path: '/health',
  tags: ['System'],
  summary: 'Liveness check (public)',
  operationId: 'health',
  security: [],
  responses: { 200: json(z.object({ status: z.literal('ok') }), 'The worker is up') },
});

const ready = createRoute({
  method: 'get',
  path: '/ready',
  tags: ['System'],
  summary: 'Readiness: every dependency checked (operators)',
  operationId: 'ready',
  description: `For operators and their monitors, apart from \`/health\` (which says only that the worker runs). Checks
at once, each within 2 s: the settings validate, the database answers, the identity provider's JWKS serves keys, QStash
answers (and how many messages its dead-letter queue holds), the vector index answers, Redis answers (when configured),
and the chat and embedding models (when configured) are known to their provider. 200 when every check passes, 503 naming
the failing ones in \`failing\`; each check's status and latency either way. No setting's value, host or upstream reply
is ever in the answer.

**Credentials:** with the deployment's \`READY_TOKEN\` set, \`Authorization: Bearer <READY_TOKEN>\` and nothing else (a
monitor needs no user); without it, an administrator's bearer token (\`app_metadata.is_admin\`); anyone else 403, an API key 403.`,
  security: [{ bearerAuth: [] }],
  middleware: readyAccess,
  responses: {
    200: json(ReadinessSchema, 'Every dependency answered'),
    503: {
      description:
        'Some dependency failed its check (a `Readiness` naming it in `failing`); or, without `READY_TOKEN`, the identity ' +
        'provider could not verify the token (an `Error`).',
      content: { 'application/json': { schema: z.union([ReadinessSchema, ErrorSchema]) } },
    },
    ...errorResponses(401, 403, 429),
  },
});

export function registerSystemRoutes(app: App) {
  app.openapi(health, (c) => c.json({ status: 'ok' as const }, 200));
  app.openapi(ready, async (c) => {
    const readiness = await checkReadiness(c.env);
    if (readiness.status === 'failing') c.var.log.warn('not_ready', { failing: readiness.failing.join(',') });
    return c.json(readiness, readiness.status === 'ready' ? 200 : 503);
  });
}
