import { createMiddleware } from 'hono/factory';
import { adaptersFor } from '#core/adapters/index.ts';
import { connect } from '#core/db/client.ts';
import { tracedQueue } from '#core/messages/request-id.ts';
import { type Config, loadConfig } from '../config.ts';
import type { AppEnv } from '../context.ts';
import { buildServices } from '../services/index.ts';

/** The adapters, with a queue that puts the request's id in every message (an upload's steps, an answer's scoring). */
function requestAdapters(config: Config, requestId: string) {
  const adapters = adaptersFor(config);
  return { ...adapters, queue: adapters.queue && tracedQueue(adapters.queue, requestId) };
}

/**
 * The settings, then one database client per request (authentication may need it, for an API key).
 * The client connects on its first query, and is closed after the response, off the critical path,
 * and after any background work (a streamed answer and its recording) is done.
 */
export const provideServices = createMiddleware<AppEnv>(async (c, next) => {
  const config = loadConfig(c.env);
  c.set('config', config);
  const sql = connect(config.HYPERDRIVE.connectionString);
  const pending: Promise<unknown>[] = [];
  // The request's id and the client's address, for the audit log's entries (CF-Connecting-IP: see client-address.ts).
  const origin = { requestId: c.var.requestId, clientAddress: c.req.header('CF-Connecting-IP')?.trim().slice(0, 64) || null };
  c.set('services', buildServices(sql, config, requestAdapters(config, c.var.requestId), origin, c.var.log));
  c.set('background', (work) => {
    pending.push(work);
    c.executionCtx.waitUntil(work);
  });
  try {
    await next();
  } finally {
    c.executionCtx.waitUntil(
      (async () => {
        // Work registered while it runs (the recording after a stream) is awaited too.
        for (let settled = 0; settled < pending.length; settled = pending.length) await Promise.allSettled(pending);
        await sql.end({ timeout: 5 });
      })(),
    );
  }
});
