import { Hono, type MiddlewareHandler } from 'hono';

const SERVICES = ['storage', 'qstash', 'vector', 'models', 'auth', 'dns'] as const;
/**
 * `auth` is the identity provider's JWKS endpoint only; sign-in and the admin API stay up.
 * `dns` is the DNS-over-HTTPS resolver; `match` a query name with `name=host`.
 */
export type FaultyService = (typeof SERVICES)[number];

interface Fault {
  service: FaultyService;
  status: number;
  /** Only requests whose path (with its query) contains this fail, so concurrent tests are not hit. */
  match?: string;
  method?: string;
  /** Requests left to fail; Infinity until cleared. 0 only counts. */
  remaining: number;
  /** Requests that matched, failed or not: how often a client called while the fault was set. */
  seen: number;
  failed: number;
}

interface FaultFilter {
  service?: FaultyService;
  match?: string;
}

const idOf = (f: { service: string; match?: string; method?: string }) => [f.service, f.match ?? '', f.method ?? ''].join('\n');

/**
 * Makes a stand-in service fail on demand, the way a real outage would look to the
 * workers (like a fault-injecting proxy), and counts the calls it sees. Tests use it to
 * check 502/503 paths, that nothing is left behind, and how often a worker retries.
 * Faults differing in `match` coexist, so tests running at once each get their own.
 * It exists only in the devstack.
 */
export function createFaults() {
  const faults = new Map<string, Fault>();

  const guard =
    (service: FaultyService): MiddlewareHandler =>
    async (c, next) => {
      const url = new URL(c.req.url);
      const target = decodeURIComponent(url.pathname + url.search);
      let failing: Fault | undefined;
      for (const fault of faults.values()) {
        if (fault.service !== service) continue;
        if (fault.method && c.req.method !== fault.method.toUpperCase()) continue;
        if (fault.match && !target.includes(fault.match)) continue;
        fault.seen += 1;
        if (!failing && fault.remaining > 0) failing = fault;
      }
      if (!failing) return next();
      failing.remaining -= 1;
      failing.failed += 1;
      return c.json({ error: `${service} unavailable (injected fault)` }, failing.status as 500);
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
    if (!body.service || !SERVICES.includes(body.service)) {
      return c.json({ error: `service must be one of ${SERVICES.join(', ')}` }, 400);
    }
    const fault: Fault = {
      service: body.service,
      status: body.status ?? 503,
      remaining: body.count ?? Number.POSITIVE_INFINITY,
      match: body.match,
      method: body.method,
      seen: 0,
      failed: 0,
    };
    faults.set(idOf(fault), fault);
    return c.json({ ok: true });
  });
  // The faults set and their counts; `remaining` is null while unlimited.
  app.get('/', (c) =>
    c.json({
      faults: [...faults.values()].map((f) => ({ ...f, remaining: Number.isFinite(f.remaining) ? f.remaining : null })),
    }),
  );
  // Clears every fault, or with ?service= and/or ?match= only those.
  app.delete('/', (c) => {
    const filter: FaultFilter = { service: c.req.query('service') as FaultyService | undefined, match: c.req.query('match') };
    for (const [id, fault] of faults) {
      if (filter.service && fault.service !== filter.service) continue;
      if (filter.match !== undefined && fault.match !== filter.match) continue;
      faults.delete(id);
    }
    return c.json({ ok: true });
  });
  return { guard, app };
}
