import {
  checkUrlSyntax,
  isIpLiteralHost,
  isPublicAddress,
  isTrustedOrigin,
  REFUSAL_MESSAGES,
  type UrlVerdict,
} from './url-policy.ts';

/**
 * Host name resolution for the URL policy. Workers have no DNS API, so names are
 * resolved with DNS-over-HTTPS in the JSON dialect Cloudflare and Google share
 * (https://cloudflare-dns.com/dns-query); the devstack serves the same API.
 */

/** Resolves a host name to its IPv4 and IPv6 addresses; an empty list means the name does not exist. */
export type ResolveHost = (host: string) => Promise<string[]>;

/**
 * `timeout`, `server_error` and `bad_response` are the resolver's own failure (down, slow,
 * SERVFAIL, garbage): asking again later may well work. `cname_chain` is the name's records
 * themselves (a loop or an absurd chain): a definite answer, like "no such name".
 */
export type DnsFailure = 'timeout' | 'server_error' | 'bad_response' | 'cname_chain';

/** The resolver could not give an answer (as opposed to answering "no such name"). The message is for logs. */
export class DnsError extends Error {
  constructor(
    readonly reason: DnsFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'DnsError';
  }

  /** Worth retrying: the resolver failed, not the name. */
  get transient(): boolean {
    return this.reason !== 'cname_chain';
  }
}

const TYPE_A = 1;
const TYPE_CNAME = 5;
const TYPE_AAAA = 28;
const STATUS_NOERROR = 0;
const STATUS_NXDOMAIN = 3;
/** CNAME chains longer than this are loops or abuse; real ones are two or three long. */
const MAX_CNAME_HOPS = 8;

interface DohAnswer {
  name: string;
  type: number;
  data: string;
}

export interface ResolverOptions {
  /** Per DoH request; the two record types are asked in parallel. */
  timeoutMs?: number;
}

export function createResolver(dohUrl: string, fetchImpl: typeof fetch = fetch, options: ResolverOptions = {}): ResolveHost {
  const timeoutMs = options.timeoutMs ?? 5000;

  async function query(name: string, type: number): Promise<{ status: number; answers: DohAnswer[] }> {
    const url = new URL(dohUrl);
    url.searchParams.set('name', name);
    url.searchParams.set('type', String(type));
    let response: Response;
    try {
      response = await fetchImpl(url, { headers: { accept: 'application/dns-json' }, signal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
        throw new DnsError('timeout', `The DNS resolver did not answer within ${timeoutMs / 1000} s`);
      }
      throw new DnsError('server_error', `The DNS resolver could not be reached: ${String(error)}`, { cause: error });
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new DnsError('server_error', `The DNS resolver answered HTTP ${response.status}`);
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch {
      throw new DnsError('bad_response', 'The DNS resolver sent a response that is not JSON');
    }
    return readDohBody(body);
  }

  /** Addresses of one record type, following CNAMEs the resolver did not chase itself. */
  async function lookup(host: string, type: number): Promise<string[]> {
    let name = host;
    for (let hop = 0; hop <= MAX_CNAME_HOPS; hop++) {
      const { status, answers } = await query(name, type);
      if (status === STATUS_NXDOMAIN) return [];
      if (status !== STATUS_NOERROR)
        throw new DnsError('server_error', `The DNS resolver failed to resolve ${host} (status ${status})`);
      // Recursive resolvers put the whole chain in one answer: walk it from the question
      // name so records for names outside the chain are never trusted.
      const chain = new Set([normaliseName(name)]);
      let grew = true;
      while (grew) {
        grew = false;
        for (const answer of answers) {
          if (answer.type !== TYPE_CNAME || !chain.has(normaliseName(answer.name))) continue;
          const target = normaliseName(answer.data);
          if (!chain.has(target)) {
            chain.add(target);
            grew = true;
          }
        }
      }
      const addresses = answers.filter((a) => a.type === type && chain.has(normaliseName(a.name))).map((a) => a.data);
      if (addresses.length > 0) return addresses;
      const end = [...chain].at(-1);
      if (chain.size === 1 || end === undefined) return [];
      name = end;
    }
    throw new DnsError('cname_chain', `The CNAME chain for ${host} is longer than ${MAX_CNAME_HOPS}`);
  }

  return async (host) => {
    const name = normaliseName(host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host);
    if (isIpLiteralHost(name) || name.includes(':')) return [name];
    // Both settle before either failure is thrown: a step that ended at the first failure would
    // leave the other lookup to be cut off, or not, as the runtime tears the request down.
    const [v4, v6] = await Promise.allSettled([lookup(name, TYPE_A), lookup(name, TYPE_AAAA)]);
    if (v4.status === 'rejected') throw v4.reason;
    if (v6.status === 'rejected') throw v6.reason;
    return [...new Set([...v4.value, ...v6.value])];
  };
}

function normaliseName(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

function readDohBody(body: unknown): { status: number; answers: DohAnswer[] } {
  if (typeof body !== 'object' || body === null || typeof (body as { Status?: unknown }).Status !== 'number') {
    throw new DnsError('bad_response', 'The DNS resolver sent a response without a Status');
  }
  const { Status, Answer } = body as { Status: number; Answer?: unknown };
  const answers = Array.isArray(Answer)
    ? Answer.filter(
        (a): a is DohAnswer =>
          typeof a === 'object' &&
          a !== null &&
          typeof a.name === 'string' &&
          typeof a.type === 'number' &&
          typeof a.data === 'string',
      )
    : [];
  return { status: Status, answers };
}

/**
 * The full policy: the syntax rules, then every address the host resolves to must be
 * public. All of them, not just the first, because the fetch may connect to any.
 * IP-literal hosts and trusted origins skip DNS. Throws DnsError when the resolver
 * itself fails, which is our outage and not the user's bad URL.
 *
 * Workers cannot pin the connection to the address checked here, so a host that
 * answers DNS differently a second later (rebinding) is caught only by Cloudflare's
 * own egress, which does not route to private ranges; the check still stops the
 * plain cases and gives the user a clear reason.
 */
export async function checkUrl(
  raw: string,
  options: { resolve: ResolveHost; trustedOrigins?: readonly string[] | undefined },
): Promise<UrlVerdict> {
  const verdict = checkUrlSyntax(raw, { trustedOrigins: options.trustedOrigins });
  if (!verdict.ok) return verdict;
  const { url } = verdict;
  if (isTrustedOrigin(url, options.trustedOrigins) || isIpLiteralHost(url.hostname)) return verdict;
  const addresses = await options.resolve(url.hostname);
  if (addresses.length === 0) return { ok: false, reason: REFUSAL_MESSAGES.does_not_resolve, code: 'does_not_resolve' };
  if (!addresses.every(isPublicAddress)) return { ok: false, reason: REFUSAL_MESSAGES.private_address, code: 'private_address' };
  return verdict;
}
