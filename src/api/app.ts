import { OpenAPIHono } from '@hono/zod-openapi';
import { HTTPException } from 'hono/http-exception';
import { requestId } from 'hono/request-id';
import { ZodError } from 'zod';
import { UpstreamError } from '#core/adapters/upstream-error.ts';
import { isMissingParent } from '#core/db/client.ts';
import { AppError, STATUS_BY_CODE } from '#core/errors.ts';
import type { App, AppEnv } from './context.ts';
import { authenticate } from './middleware/authenticate.ts';
import { provideServices } from './middleware/services.ts';
import { registerChatRoutes } from './routes/chat.ts';
import { registerCollectionRoutes } from './routes/collections.ts';
import { registerDocsRoutes } from './routes/docs.ts';
import { registerEvalRoutes } from './routes/evals.ts';
import { registerIngestRoutes } from './routes/ingest.ts';
import { registerQueryRoutes } from './routes/query.ts';
import { registerSharingRoutes } from './routes/sharing.ts';
import { registerSystemRoutes } from './routes/system.ts';
import { malformedBody, validationError } from './validation.ts';

export const API_DESCRIPTION = `Retrieval-augmented question answering over your document collections.

Every API route takes \`Authorization: Bearer <access token>\`: an ES256 JWT from the identity provider
(Supabase Auth), audience \`authenticated\`. Errors have one shape, \`{detail, code, request_id}\`; for 422
\`detail\` is a list of \`{loc, msg, type}\`. Every response carries \`X-Request-Id\`.

Paths accept a trailing slash or not: \`/collections\` and \`/collections/\` are the same route.
A collection that does not exist is 404; one that exists but is not yours to use is 403.
Per-user objects (chat sessions, ingest jobs) are 404 to everyone but their owner.

Failures of the services behind the API are reported without their upstream text: storage,
vector index and model failures are 502; an unavailable ingestion queue (or ingestion disabled
on the deployment) is 503.`;

/** The one app: the worker serves it and the tests drive it. */
export function createApp(): App {
  const app = new OpenAPIHono<AppEnv>({
    strict: false,
    defaultHook: (result) => {
      if (!result.success) throw validationError(result.error, result.target);
    },
  });

  app.use('*', requestId({ headerName: 'X-Request-Id' }));
  app.onError((error, c) => {
    const appError = toAppError(error);
    if (appError.code === 'internal_error' || error instanceof UpstreamError) console.error(`[${c.var.requestId}]`, error);
    const status = STATUS_BY_CODE[appError.code];
    if (status === 401) c.header('WWW-Authenticate', 'Bearer');
    return c.json({ detail: appError.detail, code: appError.code, request_id: c.var.requestId }, status);
  });
  app.notFound((c) => c.json({ detail: 'Not found', code: 'not_found', request_id: c.var.requestId }, 404));

  registerSystemRoutes(app);
  for (const prefix of ['/collections', '/chat', '/ingest', '/query', '/evals']) {
    app.use(`${prefix}/*`, authenticate, provideServices);
  }
  registerCollectionRoutes(app);
  registerSharingRoutes(app);
  registerChatRoutes(app);
  registerIngestRoutes(app);
  registerQueryRoutes(app);
  registerEvalRoutes(app);

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'A Supabase Auth access token (ES256, audience `authenticated`).',
  });
  app.doc31('/openapi.json', (c) => ({
    openapi: '3.1.0',
    info: { title: 'RAG service API', version: '0.1.0', description: API_DESCRIPTION },
    servers: [{ url: new URL(c.req.url).origin }],
    security: [{ bearerAuth: [] }],
  }));
  registerDocsRoutes(app);
  return app;
}

function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof ZodError) return validationError(error);
  // A parent row (collection, session, user) was deleted by a concurrent request.
  if (isMissingParent(error)) return new AppError('not_found', 'Not found: it was deleted in the meantime');
  if (error instanceof UpstreamError) return upstreamError(error);
  if (error instanceof HTTPException && error.status === 400) return malformedBody();
  if (error instanceof HTTPException && error.status === 404) return new AppError('not_found', 'Not found');
  return new AppError('internal_error', 'Internal server error');
}

/** Clients learn which service failed, never what it said. */
function upstreamError(error: UpstreamError): AppError {
  switch (error.service) {
    case 'queue':
      return new AppError('service_unavailable', 'The ingestion queue is unavailable; try again shortly');
    case 'dns':
      return new AppError('service_unavailable', 'The host name could not be resolved right now; try again shortly');
    case 'storage':
      return new AppError('upstream_failed', 'The storage service failed');
    case 'vectors':
      return new AppError('upstream_failed', 'The vector index failed');
    case 'models':
      return new AppError('upstream_failed', 'The model provider failed');
  }
}
