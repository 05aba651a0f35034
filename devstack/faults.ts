import { Hono, type MiddlewareHandler } from 'hono';

export type FaultyService = 'storage' | 'qstash' | 'vector' | 'models';

interface Fault {
  status: number;
  /** Only requests whose path contains this fail, so concurrent tests are not hit. */
  match?: string;
  method?: string;
  /** Requests left to fail; Infinity until cleared. */
  remaining: number;
}

/**
 * Makes a stand-in service fail on demand, the way a real outage would look to the
 * workers (like a fault-injecting proxy). Tests use it to check 502/503 paths and
 * that nothing is left behind. It exists only in the devstack.
 */
export function createFaults() {
  const faults = new Map<FaultyService, Fault>();

  const guard =
    (service: FaultyService): MiddlewareHandler =>
    async (c, next) => {
      const fault = faults.get(service);
      if (!fault || fault.remaining <= 0) return next();
      if (fault.method && c.req.method !== fault.method.toUpperCase()) return next();
      if (fault.match && !decodeURIComponent(new URL(c.req.url).pathname).includes(fault.match)) return next();
      fault.remaining -= 1;
      return c.json({ error: `${service} unavailable (injected fault)` }, fault.status as 500);
    };

  const app = new Hono();
  app.post('/', async (c) => {
    const body = (await c.req.json().catch(() => ({}))) as {
      service?: FaultyService;
      status?: number;
      count?: number;
      match?: string;
      method?: string;
    };
    if (!body.service || !['storage', 'qstash', 'vector', 'models'].includes(body.service)) {
      return c.json({ error: 'service must be storage, qstash, vector or models' }, 400);
    }
    faults.set(body.service, {
      status: body.status ?? 503,
      remaining: body.count ?? Number.POSITIVE_INFINITY,
      match: body.match,
      method: body.method,
    });
    return c.json({ ok: true });
  });
  app.delete('/', (c) => {
    faults.clear();
    return c.json({ ok: true });
  });
  return { guard, app };
}
