/**
 * Which URLs the service may fetch on a user's behalf. A URL submitted for ingestion is
 * fetched from inside our network, so without these rules a user could make us read
 * cloud metadata (169.254.169.254), admin panels on loopback, or hosts on a private LAN
 * and store the answer in a collection they can query (server-side request forgery).
 *
 * This module is the pure half: scheme, port, userinfo, host-name and literal-address
 * rules. `dns.ts` adds the other half, checking the addresses a host name resolves to.
 */

export type UrlRefusal = 'invalid' | 'scheme' | 'userinfo' | 'port' | 'local_name' | 'private_address' | 'does_not_resolve';

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
  if (v4 !== null) return isPublicIPv4(v4) ? { ok: true, url } : refuse('private_address', LITERAL_PRIVATE);
  return checkHostName(host) ?? { ok: true, url };
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
 * Parses the INGEST_TRUSTED_ORIGINS setting: origins separated by commas or spaces.
 * Throws on an entry that is not a bare http(s) origin, so a typo fails at start-up
 * rather than silently trusting nothing or too much.
 */
export function parseTrustedOrigins(setting: string | undefined): string[] {
  const entries = (setting ?? '').split(/[\s,]+/).filter(Boolean);
  return entries.map((entry) => {
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw new Error(`INGEST_TRUSTED_ORIGINS: "${entry}" is not a URL`);
    }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) {
      throw new Error(`INGEST_TRUSTED_ORIGINS: "${entry}" must be an http or https origin`);
    }
    if (url.pathname !== '/' || url.search || url.hash) {
      throw new Error(`INGEST_TRUSTED_ORIGINS: "${entry}" must be an origin only, without a path`);
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
 * IPv4 and any IPv6 text form (brackets and zone allowed); anything it cannot parse is
 * treated as not public, so a surprise fails closed.
 */
export function isPublicAddress(ip: string): boolean {
  const text = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  if (text.includes(':')) {
    const groups = parseIPv6(text);
    return groups !== null && isPublicIPv6(groups);
  }
  const v4 = parseDottedQuad(text);
  return v4 !== null && isPublicIPv4(v4);
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
 */
export function parseIPv4Host(host: string): number | 'invalid' | null {
  const parts = host.split('.');
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  const last = parts[parts.length - 1] ?? '';
  if (!/^(\d+|0x[0-9a-f]*)$/i.test(last)) return null;
  if (parts.length > 4) return 'invalid';
  const numbers = parts.map(parseIPv4Number);
  if (numbers.some((n) => n === null)) return 'invalid';
  const values = numbers as number[];
  const head = values.slice(0, -1);
  const tail = values[values.length - 1] ?? 0;
  if (head.some((n) => n > 255) || tail >= 256 ** (5 - values.length)) return 'invalid';
  return head.reduce((sum, n, i) => sum + n * 256 ** (3 - i), 0) + tail;
}

function parseIPv4Number(part: string): number | null {
  if (part === '') return null;
  if (/^0x[0-9a-f]*$/i.test(part)) return part.length === 2 ? 0 : Number.parseInt(part.slice(2), 16);
  if (/^0\d/.test(part)) return /^0[0-7]+$/.test(part) ? Number.parseInt(part.slice(1), 8) : null;
  return /^\d+$/.test(part) ? Number(part) : null;
}

function parseDottedQuad(text: string): number | null {
  const parts = text.split('.');
  // Leading zeros are ambiguous (octal to some parsers, decimal to others): refuse them.
  if (parts.length !== 4 || parts.some((p) => !/^(0|[1-9]\d{0,2})$/.test(p) || Number(p) > 255)) return null;
  return parts.reduce((sum, p) => sum * 256 + Number(p), 0);
}

/** [first address, prefix length] of every IPv4 block that is not publicly routable (IANA special-purpose registry). */
const NON_PUBLIC_V4: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, including cloud metadata at 169.254.169.254
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // deprecated 6to4 relay anycast
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, including broadcast 255.255.255.255
];
const NON_PUBLIC_V4_RANGES = NON_PUBLIC_V4.map(([base, bits]) => {
  const start = parseDottedQuad(base) ?? 0;
  return [start, start + 2 ** (32 - bits) - 1] as const;
});

function isPublicIPv4(address: number): boolean {
  return !NON_PUBLIC_V4_RANGES.some(([start, end]) => address >= start && address <= end);
}

/**
 * Only global unicast (2000::/3) can be public; inside it, the special-purpose blocks
 * are refused and the two formats that embed an IPv4 address (NAT64, 6to4) are judged
 * by that address. IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible forms lie outside
 * 2000::/3 and are refused outright: no public page needs them and they are a classic
 * way to smuggle 127.0.0.1 past a filter.
 */
function isPublicIPv6(g: readonly number[]): boolean {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const embeddedV4 = (high: number, low: number) => high * 65536 + low;
  // 64:ff9b::/96, the well-known NAT64 prefix, reaches the IPv4 address in its last 32 bits.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return isPublicIPv4(embeddedV4(g6, g7));
  if ((g0 & 0xe000) !== 0x2000) return false;
  if (g0 === 0x2001 && g1 < 0x200) return false; // 2001::/23 IETF protocol assignments, incl. Teredo
  if (g0 === 0x2001 && g1 === 0xdb8) return false; // documentation
  if (g0 === 0x3fff && g1 < 0x1000) return false; // 3fff::/20 documentation
  if (g0 === 0x2002) return isPublicIPv4(embeddedV4(g1, g2)); // 6to4 embeds the IPv4 address
  return true;
}

function parseIPv6(text: string): number[] | null {
  // A zone (fe80::1%eth0) only makes sense for link-local addresses.
  if (text.includes('%')) return null;
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  let hex = text;
  if (tail.includes('.')) {
    // '::ffff:1.2.3.4' is '::ffff:102:304' written with the last 32 bits as a dotted quad.
    const v4 = parseDottedQuad(tail);
    if (v4 === null) return null;
    hex = `${text.slice(0, lastColon + 1)}${Math.floor(v4 / 65536).toString(16)}:${(v4 % 65536).toString(16)}`;
  }
  const halves = hex.split('::');
  if (halves.length > 2) return null;
  const toGroups = (part: string | undefined) => (part ? part.split(':') : []);
  const left = toGroups(halves[0]);
  const right = toGroups(halves[1]);
  if ([...left, ...right].some((group) => !/^[0-9a-f]{1,4}$/i.test(group))) return null;
  const explicit = left.length + right.length;
  if (halves.length === 1 ? explicit !== 8 : explicit > 7) return null;
  const zeros = new Array<number>(8 - explicit).fill(0);
  return [...left, ...zeros.map(String), ...right].map((group) => Number.parseInt(group, 16));
}
