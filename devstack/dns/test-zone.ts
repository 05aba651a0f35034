/**
 * Names the devstack's DNS-over-HTTPS server answers itself, like /etc/hosts: an IP
 * address is an A or AAAA record, anything else a CNAME to that name. The `.test`
 * TLD is reserved (RFC 6761), so these can never shadow a real site.
 */
export type DnsZone = Readonly<Record<string, readonly string[]>>;

export const DEFAULT_TEST_ZONE: DnsZone = {
  // example.com's historical addresses: public, and never fetched by the tests.
  'public.example.test': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
  'public-v6.example.test': ['2606:2800:220:1:248:1893:25c8:1946'],
  // A public-looking name pointing into a private network (DNS rebinding).
  'rebind.example.test': ['10.0.0.7'],
  'metadata.example.test': ['169.254.169.254'],
  'ula.example.test': ['fd00::7'],
  // One bad address among good ones must still be refused.
  'mixed.example.test': ['93.184.216.34', '127.0.0.1'],
  'alias.example.test': ['public.example.test'],
  'alias-rebind.example.test': ['rebind.example.test'],
  'loop-a.example.test': ['loop-b.example.test'],
  'loop-b.example.test': ['loop-a.example.test'],
};
