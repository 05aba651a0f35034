import { type AddressInfo, createServer as createTcpServer } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkUrl, createResolver, DnsError } from '#core/urls/dns.ts';
import { createDnsServer } from '../../devstack/dns/server.ts';
import { DEFAULT_TEST_ZONE } from '../../devstack/dns/test-zone.ts';
import { freePort } from '../../devstack/ports.ts';

let dohUrl: string;
let deadDohUrl: string;
let close: () => Promise<void>;

async function start(app: Hono): Promise<[string, () => Promise<void>]> {
  const port = await freePort();
  // Mounted the way the devstack mounts it.
  const root = new Hono().route('/dns-query', app);
  const server = await new Promise<ReturnType<typeof serve>>((done) => {
    const s = serve({ fetch: root.fetch, hostname: '127.0.0.1', port }, () => done(s));
  });
  return [`http://127.0.0.1:${port}/dns-query`, () => new Promise((done) => server.close(() => done()))];
}

beforeAll(async () => {
  const [url, stop] = await start(createDnsServer({ zone: DEFAULT_TEST_ZONE }));
  // Upstream DNS on a loopback port nobody listens on: every real lookup fails.
  const [deadUrl, stopDead] = await start(
    createDnsServer({ upstreamServers: [`127.0.0.1:${await freePort()}`], upstreamTimeoutMs: 300 }),
  );
  dohUrl = url;
  deadDohUrl = deadUrl;
  close = async () => {
    await stop();
    await stopDead();
  };
});
afterAll(() => close());

async function query(name: string, type: string | number, base = dohUrl) {
  const response = await fetch(`${base}?name=${encodeURIComponent(name)}&type=${type}`, {
    headers: { accept: 'application/dns-json' },
  });
  return { response, body: (await response.json()) as Record<string, unknown> };
}

describe('DoH JSON API', () => {
  it('answers zone names in the shape Cloudflare uses', async () => {
    const { response, body } = await query('public.example.test', 'A');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/dns-json/);
    expect(body).toEqual({
      Status: 0,
      TC: false,
      RD: true,
      RA: true,
      AD: false,
      CD: false,
      Question: [{ name: 'public.example.test.', type: 1 }],
      Answer: [{ name: 'public.example.test.', type: 1, TTL: 300, data: '93.184.216.34' }],
    });
  });

  it('answers AAAA by name or number, and is case-insensitive', async () => {
    const byName = await query('PUBLIC.example.test.', 'AAAA');
    const byNumber = await query('public.example.test', 28);
    expect(byName.body.Answer).toEqual([
      { name: 'public.example.test.', type: 28, TTL: 300, data: '2606:2800:220:1:248:1893:25c8:1946' },
    ]);
    expect(byNumber.body.Answer).toEqual(byName.body.Answer);
    // A name with no record of the asked type exists, but has no answer.
    const noV6 = await query('rebind.example.test', 'AAAA');
    expect(noV6.body).toMatchObject({ Status: 0 });
    expect(noV6.body).not.toHaveProperty('Answer');
  });

  it('answers a CNAME with the whole chain, as recursive resolvers do', async () => {
    const { body } = await query('alias-rebind.example.test', 'A');
    expect(body.Status).toBe(0);
    expect(body.Answer).toEqual([
      { name: 'alias-rebind.example.test.', type: 5, TTL: 300, data: 'rebind.example.test.' },
      { name: 'rebind.example.test.', type: 1, TTL: 300, data: '10.0.0.7' },
    ]);
    const cnameOnly = await query('alias.example.test', 'CNAME');
    expect(cnameOnly.body.Answer).toEqual([{ name: 'alias.example.test.', type: 5, TTL: 300, data: 'public.example.test.' }]);
  });

  it('answers NXDOMAIN for names that do not exist', async () => {
    for (const name of ['nowhere.example.test', 'anything.invalid']) {
      const { body } = await query(name, 'A');
      expect(body).toMatchObject({ Status: 3, Question: [{ name: `${name}.`, type: 1 }] });
      expect(body).not.toHaveProperty('Answer');
    }
  });

  it('gives up on a CNAME loop with SERVFAIL', async () => {
    const { body } = await query('loop-a.example.test', 'A');
    expect(body.Status).toBe(2);
  });

  it('resolves localhost for real, through the machine', async () => {
    const { body } = await query('localhost', 'A');
    expect(body.Status).toBe(0);
    expect(body.Answer).toContainEqual(expect.objectContaining({ name: 'localhost.', type: 1, data: '127.0.0.1' }));
  });

  it('maps an unreachable upstream to SERVFAIL', async () => {
    const { body } = await query('example.com', 'A', deadDohUrl);
    expect(body.Status).toBe(2);
  });

  it('refuses malformed queries with 400', async () => {
    const noName = await fetch(`${dohUrl}?type=A`);
    expect(noName.status).toBe(400);
    expect(await noName.json()).toEqual({ error: expect.stringContaining('Invalid query name') });
    const badType = await fetch(`${dohUrl}?name=example.test&type=BOGUS`);
    expect(badType.status).toBe(400);
    const unsupported = await query('example.test', 'MX');
    expect(unsupported.body.Status).toBe(4);
  });
});

describe('createResolver against the DoH server', () => {
  it('returns the A and AAAA addresses of a zone name', async () => {
    const resolve = createResolver(dohUrl);
    expect((await resolve('public.example.test')).sort()).toEqual(['2606:2800:220:1:248:1893:25c8:1946', '93.184.216.34']);
    expect(await resolve('public-v6.example.test')).toEqual(['2606:2800:220:1:248:1893:25c8:1946']);
    expect(await resolve('ula.example.test')).toEqual(['fd00::7']);
  });

  it('follows CNAMEs to the final addresses', async () => {
    const resolve = createResolver(dohUrl);
    expect((await resolve('alias.example.test')).sort()).toEqual(['2606:2800:220:1:248:1893:25c8:1946', '93.184.216.34']);
    expect(await resolve('alias-rebind.example.test')).toEqual(['10.0.0.7']);
  });

  it('returns no addresses for NXDOMAIN', async () => {
    expect(await createResolver(dohUrl)('nowhere.example.test')).toEqual([]);
  });

  it('resolves localhost to loopback', async () => {
    expect(await createResolver(dohUrl)('localhost')).toContain('127.0.0.1');
  });

  it('returns an IP literal as it is, without asking', async () => {
    const resolve = createResolver('http://127.0.0.1:9/never-called');
    expect(await resolve('8.8.8.8')).toEqual(['8.8.8.8']);
    expect(await resolve('[::1]')).toEqual(['::1']);
  });

  it('throws a DnsError when the resolver fails', async () => {
    await expect(createResolver(deadDohUrl)('example.com')).rejects.toMatchObject({ name: 'DnsError', reason: 'server_error' });
    await expect(createResolver(dohUrl)('loop-a.example.test')).rejects.toBeInstanceOf(DnsError);
    const closedPort = await freePort();
    await expect(createResolver(`http://127.0.0.1:${closedPort}/dns-query`)('example.com')).rejects.toMatchObject({
      reason: 'server_error',
      message: expect.stringContaining('could not be reached'),
    });
    const notJson: typeof fetch = async () => new Response('<html>', { status: 200 });
    await expect(createResolver(dohUrl, notJson)('example.com')).rejects.toMatchObject({ reason: 'bad_response' });
    const httpError: typeof fetch = async () => new Response('', { status: 500 });
    await expect(createResolver(dohUrl, httpError)('example.com')).rejects.toMatchObject({ reason: 'server_error' });
  });

  it('times out on a DoH server that never answers', async () => {
    const silent = createTcpServer(() => {});
    await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
    const { port } = silent.address() as AddressInfo;
    try {
      const resolve = createResolver(`http://127.0.0.1:${port}/dns-query`, fetch, { timeoutMs: 200 });
      await expect(resolve('example.com')).rejects.toMatchObject({
        reason: 'timeout',
        message: expect.stringContaining('0.2 s'),
      });
    } finally {
      silent.close();
    }
  });

  it('follows a CNAME itself when the DoH server does not chase it', async () => {
    // A non-recursive answer: only the CNAME, never the target's records.
    const asked: string[] = [];
    const shallow: typeof fetch = async (input) => {
      const url = new URL(String(input));
      const name = url.searchParams.get('name') ?? '';
      const type = Number(url.searchParams.get('type'));
      asked.push(`${name}/${type}`);
      const records: Record<string, { type: number; data: string }> = {
        'www.example.test': { type: 5, data: 'cdn.example.test.' },
        'cdn.example.test': { type: 1, data: '93.184.216.34' },
      };
      const record = records[name];
      const answer = record && (record.type === 5 || record.type === type) ? [{ name: `${name}.`, TTL: 60, ...record }] : [];
      return Response.json({ Status: 0, Answer: answer });
    };
    expect(await createResolver('https://doh.example/dns-query', shallow)('www.example.test')).toEqual(['93.184.216.34']);
    expect(asked).toContain('cdn.example.test/1');
  });

  it('ignores address records for names outside the CNAME chain', async () => {
    const poisoned: typeof fetch = async () =>
      Response.json({
        Status: 0,
        Answer: [
          { name: 'other.example.', type: 1, TTL: 60, data: '10.0.0.1' },
          { name: 'www.example.test.', type: 1, TTL: 60, data: '93.184.216.34' },
        ],
      });
    expect(await createResolver('https://doh.example/dns-query', poisoned)('www.example.test')).toEqual(['93.184.216.34']);
  });
});

describe('checkUrl with the DoH resolver and the default test zone', () => {
  it.each([
    ['https://public.example.test/page', true],
    ['https://alias.example.test/page', true],
    ['http://public-v6.example.test/', true],
    ['http://rebind.example.test/', false],
    ['http://alias-rebind.example.test/', false],
    ['http://metadata.example.test/latest/meta-data/', false],
    ['http://mixed.example.test/', false],
    ['http://ula.example.test/', false],
    ['http://nowhere.example.test/', false],
  ])('%s → %s', async (url, ok) => {
    const verdict = await checkUrl(url, { resolve: createResolver(dohUrl) });
    expect(verdict.ok).toBe(ok);
  });
});
