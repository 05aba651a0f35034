import { createMiddleware } from 'hono/factory';
import { adaptersFor } from '../adapters/index.ts';
import type { AppEnv } from '../context.ts';
import { connect } from '../db/client.ts';
import { buildServices } from '../services/index.ts';

/** One database client per request; it is closed after the response, off the critical path. */
export const provideServices = createMiddleware<AppEnv>(async (c, next) => {
  const config = c.get('config');
  const sql = connect(config.HYPERDRIVE.connectionString);
  c.set('services', buildServices(sql, config, adaptersFor(config)));
  try {
    await next();
  } finally {
    c.executionCtx.waitUntil(sql.end({ timeout: 5 }));
  }
});
