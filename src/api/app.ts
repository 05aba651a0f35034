import { OpenAPIHono } from '@hono/zod-openapi';
import { requestId } from 'hono/request-id';
import { UpstreamError } from '#core/adapters/upstream-error.ts';
import { isDatabaseUnreachable } from '#core/db/client.ts';
import type { App, AppEnv } from './context.ts';
import { toHttpError, validationFailed } from './errors.ts';
import { authenticate } from './middleware/authenticate.ts';
import { crossOrigin } from './middleware/cross-origin.ts';
import { rateLimit } from './middleware/rate-limit.ts';
import { requestLog } from './middleware/request-log.ts';
import { provideServices } from './middleware/services.ts';
import { registerAdminRoutes } from './routes/admin.ts';
import { registerAuditRoutes } from './routes/audit.ts';
import { registerChatRoutes } from './routes/chat.ts';
import { registerCollectionRoutes } from './routes/collections.ts';
import { registerEvalRoutes } from './routes/evals.ts';
import { registerIngestRoutes } from './routes/ingest.ts';
import { registerKeyRoutes } from './routes/keys.ts';
import { registerPageRoutes } from './routes/pages.ts';
import { registerQueryRoutes } from './routes/query.ts';
import { registerSharingRoutes } from './routes/sharing.ts';
import { registerSourceRoutes } from './routes/sources.ts';
import { registerSystemRoutes } from './routes/system.ts';
import { registerUsageRoutes } from './routes/usage.ts';
import { registerWebhookRoutes } from './routes/webhooks.ts';
import { zodIssues } from './validation.ts';

export const API_DESCRIPTION = `Retrieval-augmented question answering over your document collections.

Every API route takes \`Authorization: Bearer <access token>\`: an ES256 or RS256 JWT from the identity provider
(Supabase Auth), audience \`authenticated\`, from the deployment's issuer (anonymous sign-ins get 403); or, where an operation's \`security\` lists \`apiKey\`, an API key
(\`POST /keys/\`) in \`X-API-Key\` holding the scope named there. A key acts as its owner, limited to its scopes
and optionally to one collection; never both credentials at once (401 \`ambiguous_credentials\`). Errors have one
shape, \`{detail, code, request_id}\`; for 422 \`detail\` is a list of \`{loc, msg, type}\`. Every response carries
\`X-Request-Id\`.

Rate limits (when the deployment has Redis) count per user: a user's bearer token and all their API keys
share one budget, 120 requests a minute by default, 20 questions a minute on \`POST /query/\` and 60 searches a
minute on \`POST /query/search\`. A user holds at most 50 active API keys. Every authenticated answer carries
\`RateLimit-Policy\` and \`RateLimit\` (draft-ietf-httpapi-ratelimit-headers); past a limit, 429 \`rate_limited\`
with \`Retry-After\`. Refused credentials (401 \`invalid_token\`, \`invalid_api_key\`) count against the client's
address, 30 a minute by default; past that, every request from the address that carries a credential is 429
with \`Retry-After\`.

When one of your ingest jobs ends, your webhooks (\`POST /webhooks/\`) get a signed \`WebhookPayload\`; when a sync of one of
your sources (\`POST /sources/\`) ends, a \`SourceSyncedPayload\`.

Browsers on other origins may call the API only when the deployment's \`CORS_ORIGINS\` lists them: the
preflight is answered without a token (204 for a listed origin, 403 otherwise), and responses expose
\`X-Request-Id\`, \`Retry-After\` and the rate-limit fields.

Paths accept a trailing slash or not: \`/collections\` and \`/collections/\` are the same route.
A collection that does not exist is 404; one that exists but is not yours to use is 403.
Per-user objects (chat sessions, ingest jobs, API keys, webhooks, personal sources) are 404 to everyone but their owner.

Failures of the services behind the API are reported without their upstream text: storage,
vector index and model failures are 502; an unavailable ingestion queue (or ingestion disabled
on the deployment) is 503. So is a token whose signing key cannot be had because the identity provider
cannot be reached (a key id not yet seen, or keys older than the deployment's staleness limit): retry
later, do not refresh the token.`;

/** The one app: the worker serves it and the tests drive it. */
export function createApp(): App {
  const app = new OpenAPIHono<AppEnv>({
    strict: false,
    defaultHook: (result) => {
      if (!result.success) throw validationFailed(zodIssues(result.error, result.target));
    },
  });

  app.use('*', requestId({ headerName: 'X-Request-Id' }));
  app.use('*', requestLog);
  app.use('*', crossOrigin);
  app.onError((error, c) => {
    const failure = toHttpError(error);
    if (failure.code === 'internal_error' || error instanceof UpstreamError || isDatabaseUnreachable(error)) {
      c.var.log.error('request_failed', error, { status: failure.status, code: failure.code });
    }
    if (failure.status === 401) c.header('WWW-Authenticate', 'Bearer');
    if (failure.retryAfter !== undefined) c.header('Retry-After', String(failure.retryAfter));
    return c.json({ detail: failure.detail, code: failure.code, request_id: c.var.requestId }, failure.status);
  });
  app.notFound((c) => c.json({ detail: 'Not found', code: 'not_found', request_id: c.var.requestId }, 404));

  registerSystemRoutes(app);
  registerPageRoutes(app);
  for (const prefix of [
    '/collections',
    '/chat',
    '/ingest',
    '/sources',
    '/query',
    '/evals',
    '/keys',
    '/webhooks',
    '/audit',
    '/usage',
    '/admin',
  ]) {
    app.use(`${prefix}/*`, provideServices, authenticate, rateLimit);
  }
  registerCollectionRoutes(app);
  registerSharingRoutes(app);
  registerChatRoutes(app);
  registerIngestRoutes(app);
  registerSourceRoutes(app);
  registerQueryRoutes(app);
  registerEvalRoutes(app);
  registerKeyRoutes(app);
  registerWebhookRoutes(app);
  registerUsageRoutes(app);
  registerAuditRoutes(app);
  registerAdminRoutes(app);

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'A Supabase Auth access token (ES256 or RS256, audience `authenticated`).',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'apiKey', {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description: 'An API key (`POST /keys/`): its owner’s rights, limited to its scopes and, optionally, one collection.',
  });
  app.doc31('/openapi.json', (c) => openApiConfig(new URL(c.req.url).origin));
  return app;
}

/**
 * The description's own fields, for `/openapi.json` (served with the origin it was asked on) and for
 * `npm run openapi` (client/generate.ts), which writes it without a server.
 */
export function openApiConfig(origin?: string) {
  return {
    openapi: '3.1.0',
    info: { title: 'RAG service API', version: '0.1.0', description: API_DESCRIPTION },
    ...(origin === undefined ? {} : { servers: [{ url: origin }] }),
    security: [{ bearerAuth: [] }],
  };
}
