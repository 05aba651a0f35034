import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DnsError } from '#core/urls/dns.ts';
import { freePort } from '../../devstack/ports.ts';
import {
  FetchFailed,
  FetchRefused,
  formatBytes,
  type GuardedFetchOptions,
  guardedFetch,
} from '../../workers/ingest/src/guarded-fetch.ts';

// Two loopback servers: `site` is trusted (as the devstack's test pages are), `other`
// is not, so reaching it needs the policy to be bypassed.
let site: Server;
let other: Server;
let siteOrigin: string;
let otherOrigin: string;
const hits: string[] = [];
let streamedBytes = 0;
let streamClosed: Promise<void> = Promise.resolve();

/** 3 MB of text in 64 KB writes, for the bodies sent without a length or compressed. */
const LONG_PAGE = Buffer.from(Array.from({ length: 3 * 16_384 }, (_, i) => `line ${String(i).padStart(58, '0')}\n`).join(''));
const GZIPPED = gzipSync(LONG_PAGE);
// 40 MB of zeros, gzipped to about 40 KB: a small download that decodes past any cap.
const GZIP_BOMB = gzipSync(Buffer.alloc(40 * 1024 * 1024));

const zone: Record<string, string[]> = {
  'public.example.test': ['93.184.216.34'],
  'rebind.example.test': ['10.0.0.7'],
};
const resolve = async (host: string) => zone[host] ?? [];

function routes(req: IncomingMessage, res: ServerResponse) {
  const url = new URL(req.url ?? '/', siteOrigin);
  hits.push(url.pathname + url.search);
  const redirect = (location: string, status = 302) => res.writeHead(status, { location }).end();
  switch (url.pathname) {
    case '/page':
      return res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<p>hello</p>');
    case '/to-metadata':
      return redirect('http://169.254.169.254/latest/meta-data/');
    case '/to-rebind':
      return redirect('http://rebind.example.test/admin', 301);
    case '/to-public':
      return redirect('http://public.example.test/page', 307);
    case '/to-other':
      return redirect(`${otherOrigin}/page`);
    case '/to-ftp':
      return redirect('ftp://files.example.test/x');
    case '/loop':
      return redirect(`/loop?n=${Number(url.searchParams.get('n') ?? 0) + 1}`);
    case '/rel/a':
      return redirect('b', 303);
    case '/rel/b':
      return redirect('../final?from=b', 308);
    case '/final':
      return res.writeHead(200, { 'content-type': 'text/plain' }).end(`final ${url.search}`);
    case '/missing':
      return res.writeHead(404, { 'content-type': 'text/plain' }).end('no such page');
    case '/server-error':
      return res.writeHead(503).end();
    case '/redirect-without-location':
      return res.writeHead(302).end();
    case '/huge-declared':
      // Declares 60 MB but sends a few bytes: the declaration alone must be enough to refuse.
      res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': String(60 * 1024 * 1024) });
      res.write('%PDF-1.7');
      return;
    case '/endless-chunks': {
      streamedBytes = 0;
      res.writeHead(200, { 'content-type': 'text/html' });
      const chunk = Buffer.alloc(16 * 1024, 'a');
      streamClosed = new Promise((done) => res.once('close', () => done()));
      const pump = () => {
        if (res.destroyed) return;
        streamedBytes += chunk.length;
        if (res.write(chunk)) setImmediate(pump);
        else res.once('drain', pump);
      };
      pump();
      return;
    }
    case '/dropped':
      res.writeHead(200, { 'content-type': 'text/html', 'content-length': '1000' });
      res.write('<p>only the start');
      setTimeout(() => res.destroy(), 20);
      return;
    case '/chunked': {
      res.writeHead(200, { 'content-type': 'text/plain' });
      for (let i = 0; i < LONG_PAGE.length; i += 65_536) res.write(LONG_PAGE.subarray(i, i + 65_536));
      return res.end();
    }
    case '/gzipped':
      // The declared length is the compressed body's; fetch hands over the decoded one.
      return res
        .writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip', 'content-length': String(GZIPPED.length) })
        .end(GZIPPED);
    case '/gzip-bomb':
      return res
        .writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip', 'content-length': String(GZIP_BOMB.length) })
        .end(GZIP_BOMB);
    case '/silent':
      return; // never answers
    default:
      return res.writeHead(404).end();
  }
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<[Server, string]> {
  const port = await freePort();
  const server = createServer(handler);
  await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
  return [server, `http://127.0.0.1:${port}`];
}

beforeAll(async () => {
  [site, siteOrigin] = await listen(routes);
  [other, otherOrigin] = await listen((_req, res) => res.writeHead(200).end('other'));
});
afterAll(async () => {
  for (const server of [site, other]) {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  }
});

/** Real fetch, except that public.example.test is answered by the trusted site, as DNS would route it. */
const fetched: string[] = [];
const fetchImpl: typeof fetch = (input, init) => {
  const url = new URL(input instanceof Request ? input.url : String(input));
  fetched.push(url.href);
  if (url.hostname === 'public.example.test') return fetch(`${siteOrigin}${url.pathname}${url.search}`, init);
  return fetch(url, init);
};

const options = (extra: Partial<GuardedFetchOptions> = {}): GuardedFetchOptions => ({
  resolve,
  trustedOrigins: [siteOrigin],
  maxBytes: 1024 * 1024,
  fetchImpl,
  ...extra,
});

async function failure(promise: Promise<unknown>): Promise<FetchRefused | FetchFailed> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof FetchRefused || error instanceof FetchFailed)) throw new Error(`expected a typed failure, got ${error}`);
  return error;
}

describe('guardedFetch', () => {
  it('fetches a page and reports its final URL, status and type', async () => {
    const page = await guardedFetch(`${siteOrigin}/page`, options());
    expect(page).toMatchObject({ url: `${siteOrigin}/page`, status: 200, contentType: 'text/html; charset=utf-8' });
    expect(new TextDecoder().decode(page.bytes)).toBe('<p>hello</p>');
  });

  it('refuses a private first URL without fetching it', async () => {
    fetched.length = 0;
    const error = await failure(guardedFetch('http://10.0.0.1/', options()));
    expect(error).toBeInstanceOf(FetchRefused);
    expect(error).toMatchObject({ reason: 'url_not_allowed', message: 'The URL points to a private or reserved address' });
    const untrusted = await failure(guardedFetch(`${otherOrigin}/page`, options()));
    expect(untrusted.message).toBe('Only the standard web ports 80 and 443 are accepted');
    expect(fetched).toEqual([]);
  });

  it('refuses a redirect to the metadata address at fetch time', async () => {
    fetched.length = 0;
    const error = await failure(guardedFetch(`${siteOrigin}/to-metadata`, options()));
    expect(error).toBeInstanceOf(FetchRefused);
    expect(error).toMatchObject({ reason: 'redirect_not_allowed', message: 'The URL redirected to a private address' });
    expect(fetched).toEqual([`${siteOrigin}/to-metadata`]);
  });

  it('refuses a redirect to a host whose DNS answer is private', async () => {
    fetched.length = 0;
    const error = await failure(guardedFetch(`${siteOrigin}/to-rebind`, options()));
    expect(error).toMatchObject({ reason: 'redirect_not_allowed', message: 'The URL redirected to a private address' });
    expect(fetched).toEqual([`${siteOrigin}/to-rebind`]);
  });

  it('refuses redirects to untrusted loopback ports and other schemes', async () => {
    const toOther = await failure(guardedFetch(`${siteOrigin}/to-other`, options()));
    expect(toOther).toMatchObject({ reason: 'redirect_not_allowed' });
    expect(toOther.message).toMatch(/^The URL redirected to an address that is not allowed: only the standard web ports/);
    const toFtp = await failure(guardedFetch(`${siteOrigin}/to-ftp`, options()));
    expect(toFtp.message).toBe('The URL redirected to an address that is not allowed: only http and https URLs are accepted');
  });

  it('follows a redirect to a public host', async () => {
    const page = await guardedFetch(`${siteOrigin}/to-public`, options());
    expect(page.url).toBe('http://public.example.test/page');
    expect(new TextDecoder().decode(page.bytes)).toBe('<p>hello</p>');
  });

  it('follows relative redirects against the current URL', async () => {
    const page = await guardedFetch(`${siteOrigin}/rel/a`, options());
    expect(page.url).toBe(`${siteOrigin}/final?from=b`);
    expect(new TextDecoder().decode(page.bytes)).toBe('final ?from=b');
  });

  it('stops a redirect loop after five redirects', async () => {
    hits.length = 0;
    const error = await failure(guardedFetch(`${siteOrigin}/loop`, options()));
    expect(error).toBeInstanceOf(FetchRefused);
    expect(error).toMatchObject({ reason: 'too_many_redirects', message: 'Too many redirects' });
    expect(hits).toEqual(['/loop', '/loop?n=1', '/loop?n=2', '/loop?n=3', '/loop?n=4', '/loop?n=5']);
    const strict = await failure(guardedFetch(`${siteOrigin}/rel/a`, options({ maxRedirects: 1 })));
    expect(strict.message).toBe('Too many redirects');
  });

  it('refuses a body whose Content-Length is over the cap before reading it', async () => {
    const error = await failure(guardedFetch(`${siteOrigin}/huge-declared`, options({ maxBytes: 50 * 1024 * 1024 })));
    expect(error).toMatchObject({ reason: 'too_large', message: 'The page is larger than 50 MB' });
  });

  it('stops reading a chunked body once it passes the cap', async () => {
    const error = await failure(guardedFetch(`${siteOrigin}/endless-chunks`, options({ maxBytes: 100 * 1024 })));
    expect(error).toMatchObject({ reason: 'too_large', message: 'The page is larger than 100 KB' });
    await streamClosed;
    // The connection was dropped, not drained: the server stopped soon after the cap.
    expect(streamedBytes).toBeLessThan(20 * 1024 * 1024);
  });

  // How much memory each takes is test/unit/hostile-files.test.ts's (bench/hostile/url-probe.ts).
  it('reads a body without a length, or compressed, whole and exact', async () => {
    for (const path of ['/chunked', '/gzipped']) {
      const page = await guardedFetch(`${siteOrigin}${path}`, options({ maxBytes: 4 * 1024 * 1024 }));
      expect(Buffer.from(page.bytes).equals(LONG_PAGE), path).toBe(true);
    }
  });

  it('counts a compressed body as it decodes: a small download that decodes past the cap is refused', async () => {
    expect(GZIP_BOMB.length).toBeLessThan(100 * 1024);
    const error = await failure(guardedFetch(`${siteOrigin}/gzip-bomb`, options({ maxBytes: 1024 * 1024 })));
    expect(error).toMatchObject({ reason: 'too_large', message: 'The page is larger than 1 MB' });
    // Without a length, the count alone decides: one byte over the cap is refused, the cap itself is not.
    const over = await failure(guardedFetch(`${siteOrigin}/chunked`, options({ maxBytes: LONG_PAGE.length - 1 })));
    expect(over).toMatchObject({ reason: 'too_large' });
    const fits = await guardedFetch(`${siteOrigin}/chunked`, options({ maxBytes: LONG_PAGE.length }));
    expect(fits.bytes.byteLength).toBe(LONG_PAGE.length);
  });

  it('gives up on a server that never answers', async () => {
    const started = Date.now();
    const error = await failure(guardedFetch(`${siteOrigin}/silent`, options({ timeoutMs: 300 })));
    expect(error).toBeInstanceOf(FetchFailed);
    expect(error).toMatchObject({ reason: 'timeout', message: 'The server did not respond within 0.3 s' });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('bounds a resolver that hangs with the same timeout', async () => {
    const hanging = () => new Promise<string[]>(() => {});
    const error = await failure(guardedFetch('https://slow.example.test/', options({ resolve: hanging, timeoutMs: 200 })));
    expect(error).toMatchObject({ reason: 'timeout' });
  });

  it('reports a non-2xx final status in plain words', async () => {
    const missing = await failure(guardedFetch(`${siteOrigin}/missing`, options()));
    expect(missing).toBeInstanceOf(FetchFailed);
    expect(missing).toMatchObject({ reason: 'http_status', status: 404, message: 'The URL could not be reached (HTTP 404)' });
    const down = await failure(guardedFetch(`${siteOrigin}/server-error`, options()));
    expect(down.message).toBe('The URL could not be reached (HTTP 503)');
    const noLocation = await failure(guardedFetch(`${siteOrigin}/redirect-without-location`, options()));
    expect(noLocation.message).toBe('The URL could not be reached (HTTP 302)');
  });

  it('reports a refused connection and a failed DNS lookup', async () => {
    const closedPort = await freePort();
    const refused = await failure(
      guardedFetch(`http://127.0.0.1:${closedPort}/`, options({ trustedOrigins: [`http://127.0.0.1:${closedPort}`] })),
    );
    expect(refused).toMatchObject({ reason: 'unreachable' });
    expect(refused.message).toMatch(/^The URL could not be reached \(/);
    const dnsDown = async () => {
      throw new DnsError('timeout', 'The DNS resolver did not answer within 5 s');
    };
    const lookup = await failure(guardedFetch('https://public.example.test/', options({ resolve: dnsDown })));
    expect(lookup).toMatchObject({ reason: 'dns_failed' });
    expect(lookup.message).toContain('did not answer');
  });

  it('reports a connection dropped in the middle of the body', async () => {
    const error = await failure(guardedFetch(`${siteOrigin}/dropped`, options()));
    expect(error).toBeInstanceOf(FetchFailed);
    expect(error).toMatchObject({ reason: 'unreachable', message: 'The connection was lost while the page was downloading' });
  });

  it('refuses a host name that does not resolve', async () => {
    const error = await failure(guardedFetch('https://nowhere.example.test/', options()));
    expect(error).toMatchObject({ reason: 'url_not_allowed', message: 'The host name does not resolve' });
  });
});

describe('formatBytes', () => {
  it('writes sizes the way the limits are stated', () => {
    expect(formatBytes(50 * 1024 * 1024)).toBe('50 MB');
    expect(formatBytes(1536 * 1024)).toBe('1.5 MB');
    expect(formatBytes(2048)).toBe('2 KB');
    expect(formatBytes(500)).toBe('500 bytes');
  });
});
