import { Hono, type MiddlewareHandler } from 'hono';

const SERVICES = ['storage', 'qstash', 'vector', 'models', 'auth', 'dns', 'postgres', 'redis'] as const;
/**
 * `auth` is the identity provider's JWKS endpoint only; sign-in and the admin API stay up.
 * `dns` is the DNS-over-HTTPS resolver; `match` a query name with `name=host`.
 * `postgres` is the database as the workers reach it (devstack/postgres/server.ts): setting it resets
 * their open connections before the call that set it returns, and each new one is refused while it
 * lasts (`count` of them, if given). `match` names a worker (`api`, `ingest`, `scoring`); there is no `method`. The
 * devstack's own Auth keeps its direct connection, so sign-in still works.
 * `redis` is the Upstash Redis REST front, for the API's rate limiting with Redis down.
 */
export type FaultyService = (typeof SERVICES)[number];

interface Fault {
  service: FaultyService;
  status: number;
  /** Only requests whose path (with its query) contains this fail, so concurrent tests are not hit. */
  match?: string;
  method?: string;
  /** Sent as `Retry-After` (seconds), as a provider that is shedding load says when to come back. */
  retryAfter?: number;
  /** A slow upstream rather than a failing one: matching requests wait this long, then go through. */
  delayMs?: number;
  /** Matching requests still to let through before failing any: an outage that starts midway. */
  skip: number;
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
  const onSet = new Map<FaultyService, (match?: string) => void | Promise<void>>();

  /** Counts the call against every fault it matches; the first with failures left decides it fails. */
  function trip(service: FaultyService, method: string, target: string): Fault | undefined {
    let failing: Fault | undefined;
    for (const fault of faults.values()) {
      if (fault.service !== service) continue;
      if (fault.method && method !== fault.method.toUpperCase()) continue;
      if (fault.match && !target.includes(fault.match)) continue;
      fault.seen += 1;
      if (failing || fault.remaining <= 0) continue;
      if (fault.skip > 0) fault.skip -= 1;
      else failing = fault;
    }
    if (failing) {
      failing.remaining -= 1;
      failing.failed += 1;
    }
    return failing;
  }

  const guard =
    (service: FaultyService): MiddlewareHandler =>
    async (c, next) => {
      const url = new URL(c.req.url);
      const failing = trip(service, c.req.method, decodeURIComponent(url.pathname + url.search));
      if (!failing) return next();
      if (failing.delayMs !== undefined) {
        await new Promise((resolve) => setTimeout(resolve, failing.delayMs));
        return next();
      }
      if (failing.retryAfter !== undefined) c.header('Retry-After', String(failing.retryAfter));
      return c.json({ error: `${service} unavailable (injected fault)` }, failing.status as 500);
    };

  /** For a service that is not HTTP (a new Postgres connection from `client`): whether it may go ahead. */
  const admit = (service: FaultyService, client: string) => !trip(service, '', client);

  const app = new Hono();
  app.post('/', async (c) => {
    const body = (await c.req.json().catch(() => ({}))) as {
      service?: FaultyService;
      status?: number;
      count?: number;
      skip?: number;
      match?: string;
      method?: string;
      retryAfter?: number;
      delayMs?: number;
    };
    if (!body.service || !SERVICES.includes(body.service)) {
      return c.json({ error: `service must be one of ${SERVICES.join(', ')}` }, 400);
    }
    if (body.service === 'postgres' && body.method) {
      return c.json({ error: 'a postgres fault takes no method; match names a worker' }, 400);
    }
    const fault: Fault = {
      service: body.service,
      status: body.status ?? 503,
      skip: body.skip ?? 0,
      remaining: body.count ?? Number.POSITIVE_INFINITY,
      match: body.match,
      method: body.method,
      retryAfter: body.retryAfter,
      ...(typeof body.delayMs === 'number' && body.delayMs >= 0 ? { delayMs: body.delayMs } : {}),
      seen: 0,
      failed: 0,
    };
    faults.set(idOf(fault), fault);
    // An outage that starts now (not after `skip` calls) also ends what is under way, before this
    // answers: a test's next call must find the service down, not still finishing the old connection.
    if (fault.remaining > 0 && fault.skip === 0 && fault.delayMs === undefined) await onSet.get(fault.service)?.(fault.match);
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
  return {
    guard,
    admit,
    /**
     * What taking a service down does beyond refusing new calls (resetting the database's open
     * connections); setting the fault answers once what `run` returns has settled.
     */
    onSet: (service: FaultyService, run: (match?: string) => void | Promise<void>) => void onSet.set(service, run),
    app,
  };
}
