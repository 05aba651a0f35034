/** DNS record types and response codes, by their numbers on the wire and in DoH JSON. */
export const RRTYPE = { A: 1, CNAME: 5, AAAA: 28 } as const;
export const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4 } as const;

/** One record in a DoH JSON answer; names are fully qualified, with the trailing dot. */
export interface DnsAnswer {
  name: string;
  type: number;
  TTL: number;
  data: string;
}

export interface ZoneAnswer {
  status: number;
  answers: DnsAnswer[];
}

/** Names compare case-insensitively and with or without the root's trailing dot. */
export function normaliseName(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}
