import { describe, expect, it } from 'vitest';
import { addressBucket } from '../../src/api/middleware/client-address.ts';

// The bucket a client address counts in, for the failed-authentication limit.
describe('addressBucket', () => {
  it('is an IPv4 address itself', () => {
    expect(addressBucket('203.0.113.7')).toBe('203.0.113.7');
    expect(addressBucket(' 203.0.113.7 ')).toBe('203.0.113.7');
  });

  it('is the /64 of an IPv6 address, however it is written', () => {
    const bucket = '2001:db8:1:2::/64';
    for (const address of [
      '2001:db8:1:2::1',
      '2001:DB8:1:2:ffff:ffff:ffff:ffff',
      '2001:0db8:0001:0002:0000:0000:0000:0001',
      '2001:db8:1:2:a:b:1.2.3.4',
    ]) {
      expect(addressBucket(address), address).toBe(bucket);
    }
    expect(addressBucket('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(addressBucket('::1')).toBe('0:0:0:0::/64');
    expect(addressBucket('2001:db8::')).toBe('2001:db8:0:0::/64');
  });

  it('is the IPv4 address of an IPv4-mapped IPv6 one', () => {
    expect(addressBucket('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(addressBucket('::ffff:cb00:7107')).toBe('203.0.113.7');
  });

  it('is one shared bucket without the header, and the text itself when it is not an address', () => {
    expect(addressBucket(undefined)).toBe('unknown');
    expect(addressBucket('')).toBe('unknown');
    expect(addressBucket('1:2:3')).toBe('1:2:3');
    expect(addressBucket('1::2::3')).toBe('1::2::3');
    expect(addressBucket(`${'x'.repeat(100)}:`)).toHaveLength(64);
  });
});
