/**
 * The bucket a client's address counts in: the IPv4 address itself, or the /64 of an IPv6 one (a single
 * customer is usually given a whole /64, so its addresses would otherwise be 2^64 buckets). Cloudflare
 * sets CF-Connecting-IP on every request it passes to a worker, replacing any the client sent; without
 * it (only outside Cloudflare), every such request shares the one bucket `unknown`.
 */
export function addressBucket(address: string | undefined): string {
  const trimmed = address?.trim().toLowerCase() ?? '';
  if (trimmed === '') return 'unknown';
  if (!trimmed.includes(':')) return trimmed;
  const groups = ipv6Groups(trimmed);
  if (!groups) return trimmed.slice(0, 64);
  // An IPv4 address written as IPv6 (::ffff:a.b.c.d) is that IPv4 address.
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    const [high = 0, low = 0] = groups.slice(6);
    return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
  }
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`;
}

const HEX_GROUP = /^[0-9a-f]{1,4}$/;
const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** The eight 16-bit groups of an IPv6 address, or null if it is not one. */
function ipv6Groups(address: string): number[] | null {
  const halves = address.split('::');
  if (halves.length > 2) return null;
  const parse = (part: string | undefined): number[] | null => {
    if (!part) return [];
    const groups: number[] = [];
    const pieces = part.split(':');
    for (const [index, piece] of pieces.entries()) {
      const v4 = index === pieces.length - 1 ? IPV4.exec(piece) : null;
      if (v4) {
        const bytes = v4.slice(1).map(Number);
        if (bytes.some((byte) => byte > 255)) return null;
        const [a = 0, b = 0, c = 0, d = 0] = bytes;
        groups.push((a << 8) | b, (c << 8) | d);
      } else if (HEX_GROUP.test(piece)) {
        groups.push(Number.parseInt(piece, 16));
      } else {
        return null;
      }
    }
    return groups;
  };
  const head = parse(halves[0]);
  const tail = parse(halves[1]);
  if (!head || !tail) return null;
  if (halves.length === 1) return head.length === 8 ? head : null;
  const missing = 8 - head.length - tail.length;
  if (missing < 1) return null;
  return [...head, ...new Array<number>(missing).fill(0), ...tail];
}
