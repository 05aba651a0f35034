import { isIP } from 'node:net';
import { Hono } from 'hono';
import { type DnsAnswer, normaliseName, RCODE, RRTYPE, type ZoneAnswer } from './records.ts';
import { createSystemResolver } from './system-resolver.ts';
import type { DnsZone } from './test-zone.ts';

export interface DohOptions {
  /** Names answered from this table instead of real DNS; see DEFAULT_TEST_ZONE for the format. */
  zone?: DnsZone;
  /** How long to wait for the machine's DNS servers; offline they may never answer. */
  upstreamTimeoutMs?: number;
  /** DNS servers to ask for names outside the zone, instead of the machine's. */
  upstreamServers?: string[];
}

// Other common types are recognised so that asking for them gets NOTIMP, not a 400.
const TYPE_BY_NAME: Record<string, number> = {
  A: RRTYPE.A,
  NS: 2,
  CNAME: RRTYPE.CNAME,
  SOA: 6,
  PTR: 12,
  MX: 15,
  TXT: 16,
  AAAA: RRTYPE.AAAA,
  SRV: 33,
  HTTPS: 65,
  CAA: 257,
};
const SUPPORTED_TYPES = new Set<number>(Object.values(RRTYPE));
const ZONE_TTL = 300;
const MAX_CHAIN = 8;
const RESERVED_TLDS = ['test', 'invalid'];

/**
 * The JSON DNS-over-HTTPS API of https://cloudflare-dns.com/dns-query (A, AAAA and
 * CNAME), so the ingestion code resolves hosts the same way against the devstack.
 * Routes are relative: mount with app.route('/dns-query', createDnsServer(options)).
 */
export function createDnsServer(options: DohOptions = {}): Hono {
  const zone = new Map(Object.entries(options.zone ?? {}).map(([name, values]) => [normaliseName(name), values]));
  const system = createSystemResolver({
    timeoutMs: options.upstreamTimeoutMs,
    servers: options.upstreamServers,
    follow: answer,
  });

  // Zone names and real names may alias each other, so one depth count covers the whole chain.
  async function answer(name: string, type: number, depth: number): Promise<ZoneAnswer> {
    if (depth > MAX_CHAIN) return { status: RCODE.SERVFAIL, answers: [] };
    const values = zone.get(name);
    if (!values) {
      // RFC 6761: .test and .invalid never exist in real DNS, so the answer needs no network.
      if (RESERVED_TLDS.some((tld) => name === tld || name.endsWith(`.${tld}`))) return { status: RCODE.NXDOMAIN, answers: [] };
      return system(name, type, depth);
    }
    const alias = values.find((value) => isIP(value) === 0);
    if (alias !== undefined) {
      const target = normaliseName(alias);
      const cname = zoneRecord(name, RRTYPE.CNAME, `${target}.`);
      if (type === RRTYPE.CNAME) return { status: RCODE.NOERROR, answers: [cname] };
      const rest = await answer(target, type, depth + 1);
      return { status: rest.status, answers: [cname, ...rest.answers] };
    }
    const family = type === RRTYPE.A ? 4 : type === RRTYPE.AAAA ? 6 : 0;
    const answers = values.filter((value) => isIP(value) === family).map((value) => zoneRecord(name, type, value));
    return { status: RCODE.NOERROR, answers };
  }

  const app = new Hono();
  app.get('/', async (c) => {
    const rawName = c.req.query('name');
    const rawType = (c.req.query('type') ?? 'A').toUpperCase();
    if (!rawName || rawName.length > 253 || /[\s/\\]/.test(rawName)) {
      return c.json({ error: `Invalid query name \`${rawName ?? ''}\`` }, 400);
    }
    const type = /^\d+$/.test(rawType) ? Number(rawType) : TYPE_BY_NAME[rawType];
    if (type === undefined || !Number.isInteger(type) || type < 1 || type > 65535) {
      return c.json({ error: `Invalid query type \`${rawType}\`` }, 400);
    }
    const name = normaliseName(rawName);
    const result = SUPPORTED_TYPES.has(type) ? await answer(name, type, 1) : { status: RCODE.NOTIMP, answers: [] };
    return c.json(dohBody(name, type, result), 200, { 'content-type': 'application/dns-json' });
  });
  return app;
}

function dohBody(name: string, type: number, result: ZoneAnswer) {
  return {
    Status: result.status,
    TC: false,
    RD: true,
    RA: true,
    AD: false,
    CD: false,
    Question: [{ name: `${name}.`, type }],
    ...(result.answers.length > 0 ? { Answer: result.answers } : {}),
  };
}

function zoneRecord(name: string, type: number, data: string): DnsAnswer {
  return { name: `${name}.`, type, TTL: ZONE_TTL, data };
}
