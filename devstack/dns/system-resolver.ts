import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import { type DnsAnswer, normaliseName, RCODE, RRTYPE, type ZoneAnswer } from './records.ts';

/** Looks a name up for one record type, in the shape the DoH server sends back; depth counts CNAMEs followed so far. */
export type LookupName = (name: string, type: number, depth: number) => Promise<ZoneAnswer>;

export interface SystemResolverOptions {
  /** Per query; offline, the machine's DNS servers may never answer. */
  timeoutMs?: number;
  /** DNS servers to ask instead of the machine's (tests use a dead one). */
  servers?: string[];
  /** Resolves a CNAME target, through the zone first. */
  follow: LookupName;
}

/**
 * Answers from the machine's own DNS servers through c-ares, as a public resolver
 * would. c-ares does not read /etc/hosts, so `localhost` (RFC 6761: always loopback,
 * never sent to DNS) and names the servers do not know go to getaddrinfo, which
 * resolves them the way the rest of the machine does.
 */
export function createSystemResolver(options: SystemResolverOptions): LookupName {
  const resolver = new dns.Resolver({ timeout: options.timeoutMs ?? 2000, tries: 1 });
  if (options.servers) resolver.setServers(options.servers);

  return async (name, type, depth) => {
    if (name === 'localhost' || name.endsWith('.localhost')) return fromHostsFile(name, type);
    try {
      if (type === RRTYPE.CNAME) {
        const targets = await resolver.resolveCname(name);
        return { status: RCODE.NOERROR, answers: targets.map((data) => record(name, RRTYPE.CNAME, data, 300)) };
      }
      const alias = await cnameOf(name);
      if (alias !== null) {
        // Public resolvers answer with the whole chain: the CNAME, then the target's records.
        const rest = await options.follow(normaliseName(alias), type, depth + 1);
        return { status: rest.status, answers: [record(name, RRTYPE.CNAME, alias, 300), ...rest.answers] };
      }
      const found =
        type === RRTYPE.A ? await resolver.resolve4(name, { ttl: true }) : await resolver.resolve6(name, { ttl: true });
      return { status: RCODE.NOERROR, answers: found.map(({ address, ttl }) => record(name, type, address, ttl)) };
    } catch (error) {
      const code = (error as { code?: string }).code ?? '';
      if (code === dns.NODATA) return { status: RCODE.NOERROR, answers: [] };
      if (code === dns.NOTFOUND) return fromHostsFile(name, type);
      return { status: RCODE.SERVFAIL, answers: [] };
    }
  };

  async function cnameOf(name: string): Promise<string | null> {
    try {
      return (await resolver.resolveCname(name))[0] ?? null;
    } catch (error) {
      if ((error as { code?: string }).code === dns.NODATA) return null;
      throw error;
    }
  }
}

async function fromHostsFile(name: string, type: number): Promise<ZoneAnswer> {
  if (type === RRTYPE.CNAME) return { status: RCODE.NXDOMAIN, answers: [] };
  let found: { address: string; family: number }[];
  try {
    found = await dns.lookup(name, { all: true });
  } catch {
    return { status: RCODE.NXDOMAIN, answers: [] };
  }
  const family = type === RRTYPE.A ? 4 : 6;
  const addresses = [...new Set(found.filter((f) => f.family === family && isIP(f.address)).map((f) => f.address))];
  return { status: RCODE.NOERROR, answers: addresses.map((address) => record(name, type, address, 0)) };
}

function record(name: string, type: number, data: string, ttl: number): DnsAnswer {
  return { name: `${name}.`, type, TTL: ttl, data: type === RRTYPE.CNAME ? `${data}.` : data };
}
