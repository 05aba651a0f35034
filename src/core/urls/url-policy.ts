/**
 * Which URLs the service may fetch on a user's behalf. A URL submitted for ingestion is
 * fetched from inside our network, so without these rules a user could make us read
 * cloud metadata (169.254.169.254), admin panels on loopback, or hosts on a private LAN
 * and store the answer in a collection they can query (server-side request forgery).
 *
 * This module is the pure half: scheme, port, userinfo, host-name and literal-address
 * rules. `dns.ts` adds the other half, checking the addresses a host name resolves to.
 */

import ipaddr from 'ipaddr.js';

export type UrlRefusal =
  | 'invalid'
  | 'scheme'
  | 'userinfo'
  | 'port'
  | 'local_name'
  | 'private_address'
  | 'does_not_resolve'
  | 'ingest_only';

export type UrlVerdict = { ok: true; url: URL } | { ok: false; reason: string; code: UrlRefusal };

export const MAX_URL_LENGTH = 2048;

export const REFUSAL_MESSAGES: Record<UrlRefusal, string> = {
  invalid: 'The URL is not valid',
  scheme: 'Only http and https URLs are accepted',
  userinfo: 'URLs with a user name or password are not accepted',
  port: 'Only the standard web ports 80 and 443 are accepted',
  local_name: 'The URL must name a public host, not a local or internal one',
  private_address: 'The URL resolves to a private or reserved address',
  does_not_resolve: 'The host name does not resolve',
  ingest_only: 'The URL is on an origin trusted for URL ingestion only; webhooks are not sent there',
};

// Suffixes that name hosts on a private network or on this machine. `.local` is mDNS,
// `.internal` is what cloud providers use for metadata and VPC names
// (metadata.google.internal), `home.arpa` is RFC 8375, `.onion` must never hit DNS.
const LOCAL_SUFFIXES = ['localhost', 'local', 'internal', 'localdomain', 'home.arpa', 'lan', 'intranet', 'corp', 'onion', 'arpa'];

const LITERAL_PRIVATE = 'The URL points to a private or reserved address';

const refuse = (code: UrlRefusal, reason = REFUSAL_MESSAGES[code]): UrlVerdict => ({ ok: false, reason, code });

/**
 * Checks everything that can be decided from the URL text alone.
 *
 * `trustedOrigins` (the INGEST_TRUSTED_ORIGINS setting) are exact origins such as
 * 'http://127.0.0.1:8123' that skip the host, address and port rules. An intranet
 * deployment needs them to ingest its own wiki, and the local devstack needs them to
 * serve test pages from loopback; listing whole origins rather than loosening the rules
 * keeps every other private address refused.
 */
export function checkUrlSyntax(raw: string, options: { trustedOrigins?: readonly string[] } = {}): UrlVerdict {
  if (raw.length > MAX_URL_LENGTH) return refuse('invalid', `The URL is longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse('invalid');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return refuse('scheme');
  // `http://:@host/` parses to an empty user name and password, so look at the text too.
  if (url.username !== '' || url.password !== '' || authorityOf(raw).includes('@')) return refuse('userinfo');
  if (isTrustedOrigin(url, options.trustedOrigins)) return { ok: true, url };
  if (url.port !== '' && url.port !== '80' && url.port !== '443') return refuse('port');

  const host = url.hostname;
  if (host.startsWith('[')) return isPublicAddress(host) ? { ok: true, url } : refuse('private_address', LITERAL_PRIVATE);
  const v4 = parseIPv4Host(host);
  if (v4 === 'invalid') return refuse('invalid');
  if (v4 === null) return checkHostName(host) ?? { ok: true, url };
  // ipaddr's one-number form reads the address back.
  return isPublicIPv4(ipaddr.IPv4.parse(String(v4))) ? { ok: true, url } : refuse('private_address', LITERAL_PRIVATE);
}

/** True when the URL's origin is one of the configured trusted origins, compared exactly. */
export function isTrustedOrigin(url: URL, trustedOrigins: readonly string[] | undefined): boolean {
  if (!trustedOrigins?.length) return false;
  return trustedOrigins.some((entry) => {
    try {
      const origin = new URL(entry).origin;
      return origin !== 'null' && origin === url.origin;
    } catch {
      return false;
    }
  });
}

/**
 * Parses a trusted-origins setting (INGEST_TRUSTED_ORIGINS, WEBHOOK_TRUSTED_ORIGINS): origins
 * separated by commas or spaces. Throws on an entry that is not a bare http(s) origin, so a typo
 * fails at start-up rather than silently trusting nothing or too much.
 */
export function parseTrustedOrigins(setting: string | undefined, name = 'INGEST_TRUSTED_ORIGINS'): string[] {
  const entries = (setting ?? '').split(/[\s,]+/).filter(Boolean);
  return entries.map((entry) => {
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw new Error(`${name}: "${entry}" is not a URL`);
    }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) {
      throw new Error(`${name}: "${entry}" must be an http or https origin`);
    }
    if (url.pathname !== '/' || url.search || url.hash) {
      throw new Error(`${name}: "${entry}" must be an origin only, without a path`);
    }
    return url.origin;
  });
}

/** True for an IP literal host (as in `url.hostname`): those are checked here, not resolved. */
export function isIpLiteralHost(hostname: string): boolean {
  if (hostname.startsWith('[')) return true;
  const v4 = parseIPv4Host(hostname);
  return v4 !== null && v4 !== 'invalid';
}

/**
 * True only for unicast addresses reachable on the public internet. Accepts dotted-quad
 * IPv4 and any IPv6 text form (brackets allowed); anything it cannot parse is treated as
 * not public, so a surprise fails closed.
 */
export function isPublicAddress(ip: string): boolean {
  const text = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  if (text.includes(':')) {
    // A zone (fe80::1%eth0) only makes sense for link-local addresses.
    if (text.includes('%') || !ipaddr.IPv6.isValid(text)) return false;
    // ipaddr reads "::ffff:010.0.0.1" as decimal, where other parsers read octal: refuse the ambiguity.
    const tail = text.slice(text.lastIndexOf(':') + 1);
    if (tail.includes('.') && !ipaddr.IPv4.isValidFourPartDecimal(tail)) return false;
    return isPublicIPv6(ipaddr.IPv6.parse(text));
  }
  // Leading zeros are ambiguous (octal to some parsers, decimal to others), so only plain dotted quads count.
  return ipaddr.IPv4.isValidFourPartDecimal(text) && isPublicIPv4(ipaddr.IPv4.parse(text));
}

function checkHostName(host: string): UrlVerdict | null {
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  const labels = name.split('.');
  if (name === '' || labels.some((label) => label === '')) return refuse('invalid');
  if (LOCAL_SUFFIXES.some((suffix) => name === suffix || name.endsWith(`.${suffix}`))) return refuse('local_name');
  // A bare `intranet` or `wiki` is resolved through the machine's search domains.
  if (labels.length < 2) return refuse('local_name', 'The host name must be a full public domain name such as example.com');
  // A trailing dot skips search domains and breaks virtual hosting; nothing public needs it.
  if (host.endsWith('.')) return refuse('invalid', 'Host names ending in a dot are not accepted');
  return null;
}

function authorityOf(raw: string): string {
  // WHATWG parsers treat '\' like '/' in http(s) URLs, so both end the authority.
  const match = /^\s*[a-z][a-z0-9+.-]*:[/\\]*([^/\\?#]*)/i.exec(raw);
  return match?.[1] ?? '';
}

/**
 * The WHATWG "ends in a number" rule: a host whose last label is numeric is an IPv4
 * address, written in any of the decimal, octal (0177), hex (0x7f) or shortened (127.1)
 * forms. Node and workerd already rewrite these to dotted quads, but a runtime that did
 * not would hand us `0x7f.1` here, so both are handled. Returns null for a domain name.
 * ipaddr parses the forms (it refuses a bare "0x", which WHATWG reads as 0: that fails
 * closed); deciding that a host is an address at all is URL syntax, not its job.
 */
export function parseIPv4Host(host: string): number | 'invalid' | null {
  const address = host.endsWith('.') ? host.slice(0, -1) : host;
  if (!/(?:^|\.)(?:\d+|0x[0-9a-f]*)$/i.test(address)) return null;
  try {
    return ipaddr.IPv4.parse(address)
      .toByteArray()
      .reduce((sum, octet) => sum * 256 + octet, 0);
  } catch {
    return 'invalid';
  }
}

// ipaddr calls every IPv4 address outside its special-purpose list (private, loopback,
// link-local, carrier-grade NAT, documentation, benchmarking, multicast, reserved, …) "unicast".
const isPublicIPv4 = (address: ipaddr.IPv4) => address.range() === 'unicast';

const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');
const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');

/** The IPv4 address in bytes [from, from + 4) of an IPv6 address. */
const embeddedIPv4 = (address: ipaddr.IPv6, from: number) =>
  ipaddr.fromByteArray(address.toByteArray().slice(from, from + 4)) as ipaddr.IPv4;

/**
 * ipaddr's special-purpose blocks are refused, except the two formats that embed an IPv4
 * address (the well-known NAT64 prefix and 6to4), which are judged by that address.
 * IPv4-mapped (::ffff:a.b.c.d) is one of those blocks, so it is refused outright: no public
 * page needs it and it is a classic way to smuggle 127.0.0.1 past a filter.
 */
function isPublicIPv6(address: ipaddr.IPv6): boolean {
  const range = address.range();
  if (range === 'rfc6052') return address.match(NAT64_WELL_KNOWN) && isPublicIPv4(embeddedIPv4(address, 12));
  if (range === '6to4') return isPublicIPv4(embeddedIPv4(address, 2));
  // ipaddr's "unicast" is whatever its list leaves over, including space outside global
  // unicast (2000::/3) such as IPv4-compatible ::a.b.c.d, which no public host uses.
  return range === 'unicast' && address.match(GLOBAL_UNICAST);
}
