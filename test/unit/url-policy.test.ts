import { describe, expect, it } from 'vitest';
import { checkUrl } from '#core/urls/dns.ts';
import { checkUrlSyntax, isPublicAddress, parseIPv4Host, parseTrustedOrigins, type UrlRefusal } from '#core/urls/url-policy.ts';

type Case = [url: string, expected: 'ok' | UrlRefusal];

const cases: Case[] = [
  // Accepted
  ['https://example.com/', 'ok'],
  ['http://example.com/path?q=1#top', 'ok'],
  ['https://example.com:443/', 'ok'],
  ['http://example.com:80/', 'ok'],
  ['http://example.com:443/', 'ok'],
  ['https://sub.domain.example.org/a/b', 'ok'],
  ['https://EXAMPLE.com/', 'ok'],
  ['http://8.8.8.8/', 'ok'],
  ['http://[2606:4700:4700::1111]/', 'ok'],
  ['http://[64:ff9b::8.8.8.8]/', 'ok'], // NAT64 of a public address
  ['http://[2002:808:808::1]/', 'ok'], // 6to4 embedding a public address
  ['https://bücher.example/', 'ok'],
  // Schemes
  ['ftp://example.com/file', 'scheme'],
  ['file:///etc/passwd', 'scheme'],
  ['gopher://example.com/', 'scheme'],
  ['javascript:alert(1)', 'scheme'],
  ['data:text/html,hi', 'scheme'],
  ['ws://example.com/', 'scheme'],
  // Userinfo
  ['http://user:pass@example.com/', 'userinfo'],
  ['http://user@example.com/', 'userinfo'],
  ['http://:@example.com/', 'userinfo'],
  ['http://example.com@10.0.0.1/', 'userinfo'],
  // Ports
  ['http://example.com:8080/', 'port'],
  ['https://example.com:22/', 'port'],
  ['http://example.com:0/', 'port'],
  // Local names
  ['http://localhost/', 'local_name'],
  ['http://localhost./', 'local_name'],
  ['http://LOCALHOST:80/', 'local_name'],
  ['http://api.localhost/', 'local_name'],
  ['http://printer.local/', 'local_name'],
  ['http://metadata.google.internal/', 'local_name'],
  ['http://router.home.arpa/', 'local_name'],
  ['http://intranet/', 'local_name'],
  ['http://wiki/page', 'local_name'],
  ['http://example.com./', 'invalid'], // trailing dot
  // IPv4 literals, in every spelling WHATWG parsing accepts
  ['http://127.0.0.1/', 'private_address'],
  ['http://127.0.0.1:80/admin', 'private_address'],
  ['http://2130706433/', 'private_address'], // decimal
  ['http://0177.0.0.1/', 'private_address'], // octal
  ['http://0x7f.1/', 'private_address'], // hex, short
  ['http://0x7f000001/', 'private_address'],
  ['http://127.1/', 'private_address'], // short form
  ['http://127.0.0.1./', 'private_address'],
  ['http://10.1.2.3/', 'private_address'],
  ['http://172.16.0.1/', 'private_address'],
  ['http://172.31.255.255/', 'private_address'],
  ['http://192.168.1.1/', 'private_address'],
  ['http://169.254.169.254/latest/meta-data/', 'private_address'],
  ['http://100.64.0.1/', 'private_address'], // CGNAT
  ['http://0.0.0.0/', 'private_address'],
  ['http://0/', 'private_address'],
  ['http://192.0.0.8/', 'private_address'],
  ['http://192.0.2.1/', 'private_address'],
  ['http://198.18.0.1/', 'private_address'],
  ['http://198.51.100.7/', 'private_address'],
  ['http://203.0.113.9/', 'private_address'],
  ['http://224.0.0.1/', 'private_address'],
  ['http://240.0.0.1/', 'private_address'],
  ['http://255.255.255.255/', 'private_address'],
  // IPv6 literals
  ['http://[::1]/', 'private_address'],
  ['http://[::]/', 'private_address'],
  ['http://[fd00::1]/', 'private_address'],
  ['http://[fc00::1]/', 'private_address'],
  ['http://[fe80::1]/', 'private_address'],
  ['http://[fe80::1%25eth0]/', 'invalid'],
  ['http://[ff02::1]/', 'private_address'],
  ['http://[::ffff:127.0.0.1]/', 'private_address'],
  ['http://[::ffff:7f00:1]/', 'private_address'],
  ['http://[::ffff:169.254.169.254]/', 'private_address'],
  ['http://[::ffff:8.8.8.8]/', 'private_address'], // mapped forms are refused outright
  ['http://[::127.0.0.1]/', 'private_address'], // IPv4-compatible
  ['http://[64:ff9b::10.0.0.1]/', 'private_address'],
  ['http://[2001:db8::1]/', 'private_address'],
  ['http://[100::1]/', 'private_address'],
  ['http://[2002:a00:1::]/', 'private_address'],
  ['http://[2002:7f00:1::]/', 'private_address'],
  ['http://[2001::1]/', 'private_address'], // Teredo
  // Not URLs at all
  ['', 'invalid'],
  ['example.com', 'invalid'],
  ['http://', 'invalid'],
  ['http://1.2.3.4.5/', 'invalid'],
  [`https://example.com/${'a'.repeat(2100)}`, 'invalid'],
];

describe('checkUrlSyntax', () => {
  it.each(cases)('%s → %s', (url, expected) => {
    const verdict = checkUrlSyntax(url);
    if (expected === 'ok') {
      expect(verdict).toMatchObject({ ok: true });
    } else {
      expect(verdict).toMatchObject({ ok: false, code: expected, reason: expect.any(String) });
    }
  });

  it('covers at least 35 URLs, both accepted and refused', () => {
    expect(cases.length).toBeGreaterThanOrEqual(35);
    expect(cases.filter(([, e]) => e === 'ok').length).toBeGreaterThan(5);
  });

  it('gives reasons in plain words', () => {
    expect(checkUrlSyntax('ftp://example.com/')).toEqual({
      ok: false,
      code: 'scheme',
      reason: 'Only http and https URLs are accepted',
    });
    expect(checkUrlSyntax('http://10.0.0.1/')).toMatchObject({ reason: 'The URL points to a private or reserved address' });
  });

  it('returns the normalised URL', () => {
    const verdict = checkUrlSyntax('HTTPS://Example.COM:443/a b');
    expect(verdict.ok && verdict.url.href).toBe('https://example.com/a%20b');
  });

  it('exempts exactly the trusted origins from the address and port rules', () => {
    const trustedOrigins = ['http://127.0.0.1:8123'];
    expect(checkUrlSyntax('http://127.0.0.1:8123/page.html', { trustedOrigins })).toMatchObject({ ok: true });
    expect(checkUrlSyntax('http://127.0.0.1:8124/page.html', { trustedOrigins })).toMatchObject({ code: 'port' });
    expect(checkUrlSyntax('http://127.0.0.1/', { trustedOrigins })).toMatchObject({ code: 'private_address' });
    expect(checkUrlSyntax('https://127.0.0.1:8123/', { trustedOrigins })).toMatchObject({ code: 'port' });
    expect(checkUrlSyntax('http://wiki.corp/', { trustedOrigins: ['http://wiki.corp'] })).toMatchObject({ ok: true });
    // Userinfo stays refused even there: it never belongs in a stored source URL.
    expect(checkUrlSyntax('http://a:b@127.0.0.1:8123/', { trustedOrigins })).toMatchObject({ code: 'userinfo' });
    // A malformed trusted entry trusts nothing.
    expect(checkUrlSyntax('http://127.0.0.1:8123/', { trustedOrigins: ['not a url'] })).toMatchObject({ ok: false });
  });
});

describe('isPublicAddress', () => {
  it.each([
    ['8.8.8.8', true],
    ['93.184.216.34', true],
    ['172.32.0.1', true],
    ['100.128.0.1', true],
    ['2606:2800:220:1:248:1893:25c8:1946', true],
    ['[2a00:1450:4001::200e]', true],
    ['10.0.0.7', false],
    ['127.0.0.1', false],
    ['169.254.169.254', false],
    ['172.16.5.4', false],
    ['100.127.255.255', false],
    ['198.19.255.255', false],
    ['::1', false],
    ['::', false],
    ['fe80::1', false],
    ['febf::1', false],
    ['fe80::1%eth0', false],
    ['fd12:3456::1', false],
    ['ff05::2', false],
    ['::ffff:10.0.0.1', false],
    ['64:ff9b::a9fe:a9fe', false],
    ['64:ff9b:1::1', false],
    ['3fff::1', false],
    ['2001:db8:1::1', false],
    ['010.0.0.1', false], // ambiguous leading zero
    ['1.2.3', false],
    ['not-an-ip', false],
    ['1::2::3', false],
    ['1:2:3:4:5:6:7:8:9', false],
  ])('%s → %s', (ip, expected) => {
    expect(isPublicAddress(ip)).toBe(expected);
  });
});

describe('parseIPv4Host', () => {
  it('reads the numeric forms a runtime might leave unnormalised', () => {
    for (const host of ['0x7f.1', '127.1', '2130706433', '0177.0.0.1', '0x7F.0.0.1', '127.0.0.1.']) {
      expect(parseIPv4Host(host)).toBe(0x7f000001);
    }
    expect(parseIPv4Host('example.com')).toBeNull();
    expect(parseIPv4Host('1.2.3.4.5')).toBe('invalid');
    expect(parseIPv4Host('1.256.1')).toBe('invalid');
    expect(parseIPv4Host('08.1.1.1')).toBe('invalid');
  });
});

describe('parseTrustedOrigins', () => {
  it('reads a comma or space separated list of origins', () => {
    expect(parseTrustedOrigins('http://127.0.0.1:8123, https://Wiki.Corp')).toEqual([
      'http://127.0.0.1:8123',
      'https://wiki.corp',
    ]);
    expect(parseTrustedOrigins(undefined)).toEqual([]);
    expect(parseTrustedOrigins('')).toEqual([]);
  });

  it('refuses entries that are not bare http(s) origins', () => {
    expect(() => parseTrustedOrigins('127.0.0.1:8123')).toThrow(/INGEST_TRUSTED_ORIGINS/);
    expect(() => parseTrustedOrigins('http://127.0.0.1:8123/docs')).toThrow(/origin only/);
    expect(() => parseTrustedOrigins('ftp://files.corp')).toThrow(/http or https/);
  });
});

describe('checkUrl', () => {
  const zone: Record<string, string[]> = {
    'public.example.test': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
    'rebind.example.test': ['10.0.0.7'],
    'mixed.example.test': ['93.184.216.34', '127.0.0.1'],
    'v6.example.test': ['fd00::1'],
  };
  const asked: string[] = [];
  const resolve = async (host: string) => {
    asked.push(host);
    return zone[host] ?? [];
  };

  it('accepts a host whose every address is public', async () => {
    expect(await checkUrl('https://public.example.test/a', { resolve })).toMatchObject({ ok: true });
  });

  it('refuses a host with any private address', async () => {
    for (const host of ['rebind.example.test', 'mixed.example.test', 'v6.example.test']) {
      expect(await checkUrl(`http://${host}/`, { resolve })).toEqual({
        ok: false,
        code: 'private_address',
        reason: 'The URL resolves to a private or reserved address',
      });
    }
  });

  it('refuses a host that does not resolve', async () => {
    expect(await checkUrl('http://nowhere.example.test/', { resolve })).toEqual({
      ok: false,
      code: 'does_not_resolve',
      reason: 'The host name does not resolve',
    });
  });

  it('skips DNS for IP literals, trusted origins and URLs refused by syntax', async () => {
    asked.length = 0;
    expect(await checkUrl('http://8.8.8.8/', { resolve })).toMatchObject({ ok: true });
    expect(await checkUrl('http://localhost:8000/', { resolve, trustedOrigins: ['http://localhost:8000'] })).toMatchObject({
      ok: true,
    });
    expect(await checkUrl('http://printer.local/', { resolve })).toMatchObject({ code: 'local_name' });
    expect(asked).toEqual([]);
  });

  it('lets resolver failures through, since they are not the URL’s fault', async () => {
    const failing = async () => {
      throw new Error('resolver down');
    };
    await expect(checkUrl('https://public.example.test/', { resolve: failing })).rejects.toThrow('resolver down');
  });
});
