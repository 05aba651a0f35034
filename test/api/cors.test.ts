import type { Server } from 'node:http';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningWorker, startWorker } from '../../devstack/local/worker.ts';
import { freePort } from '../../devstack/ports.ts';
import { chromiumAvailable, launchChromium } from '../support/browser.ts';
import { api, signUp, stack, type TestUser } from '../support/client.ts';

// CORS for other frontends: an API worker with CORS_ORIGINS set, beside the suite's own, which has none.
const ALLOWED = 'https://app.example.test';
const REFUSED = 'https://elsewhere.example.test';
let worker: RunningWorker;
let owner: TestUser;
// Two pages on loopback, each its own origin: one listed in CORS_ORIGINS, one not.
let pages: { allowed: string; refused: string; servers: Server[] };

/** A blank page on a loopback port of its own. */
async function pageOrigin(): Promise<{ origin: string; server: Server }> {
  const port = await freePort();
  const app = new Hono().get('/', (c) => c.html('<!doctype html><title>another app</title>'));
  const server = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }) as Server;
  return { origin: `http://127.0.0.1:${port}`, server };
}

beforeAll(async () => {
  const [allowedPage, refusedPage] = [await pageOrigin(), await pageOrigin()];
  pages = { allowed: allowedPage.origin, refused: refusedPage.origin, servers: [allowedPage.server, refusedPage.server] };
  worker = await startWorker({
    config: 'wrangler.toml',
    port: await freePort(),
    vars: { ...stack.apiVars, CORS_ORIGINS: `${ALLOWED}, ${pages.allowed}` },
    hyperdrive: { HYPERDRIVE: stack.databaseUrl },
    persistTo: join(stack.persistDir, 'cors'),
    quiet: true,
  });
  owner = await signUp('cors');
});
afterAll(async () => {
  await worker?.stop();
  for (const server of pages?.servers ?? []) server.close();
});

const preflight = (base: string, origin: string, path = '/query/') =>
  fetch(`${base}${path}`, {
    method: 'OPTIONS',
    headers: {
      Origin: origin,
      'Access-Control-Request-Method': 'POST',
      'Access-Control-Request-Headers': 'authorization, content-type',
    },
  });

describe('CORS', () => {
  it('answers a preflight from an allowed origin without a token', async () => {
    const response = await preflight(worker.url, ALLOWED);
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(response.headers.get('access-control-allow-methods')).toContain('POST');
    expect(response.headers.get('access-control-allow-headers')?.toLowerCase().split(',')).toEqual(
      expect.arrayContaining(['authorization', 'content-type']),
    );
    expect(response.headers.get('access-control-max-age')).toBe('600');
    expect(response.headers.get('vary')).toContain('Origin');
  });

  it('refuses a preflight from any other origin with 403 and no CORS headers', async () => {
    for (const [base, origin] of [
      [worker.url, REFUSED],
      [worker.url, `${ALLOWED}:8443`],
      // Without CORS_ORIGINS no other origin is allowed at all.
      [stack.apiUrl, ALLOWED],
    ] as const) {
      const response = await preflight(base, origin);
      expect(response.status, `${base} ${origin}`).toBe(403);
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
      const body = (await response.json()) as { code: string; detail: string };
      expect(body.code).toBe('forbidden');
      expect(body.detail).toMatch(/CORS_ORIGINS/);
    }
  });

  it('lets the allowed origin read answers, errors and the request id, and nobody else', async () => {
    const listed = await fetch(`${worker.url}/collections/`, {
      headers: { Origin: ALLOWED, Authorization: `Bearer ${owner.token}` },
    });
    expect(listed.status).toBe(200);
    expect(listed.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(listed.headers.get('access-control-expose-headers')?.split(',')).toEqual([
      'X-Request-Id',
      'Retry-After',
      'RateLimit',
      'RateLimit-Policy',
    ]);
    expect(listed.headers.get('x-request-id')).toBeTruthy();

    // A 401 must be readable too, or a browser app cannot tell an expired token from a network failure.
    const unauthenticated = await fetch(`${worker.url}/collections/`, { headers: { Origin: ALLOWED } });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get('access-control-allow-origin')).toBe(ALLOWED);

    const elsewhere = await fetch(`${worker.url}/collections/`, {
      headers: { Origin: REFUSED, Authorization: `Bearer ${owner.token}` },
    });
    expect(elsewhere.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('streams an answer to the allowed origin with the CORS headers on the event stream', async () => {
    const created = await api('POST', '/collections/', { token: owner.token, body: { name: 'Cross-origin' } });
    const response = await fetch(`${worker.url}/query/`, {
      method: 'POST',
      headers: { Origin: ALLOWED, Authorization: `Bearer ${owner.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ question: 'Anything there?', collection_id: created.body.id }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(await response.text()).toMatch(/^event: metadata\n/);
  });
});

describe.skipIf(!chromiumAvailable)('CORS in headless Chromium', () => {
  it('a page on a listed origin reads the API; a page on another origin is stopped by the browser', async () => {
    const browser = await launchChromium();
    try {
      const call = async (origin: string) => {
        const page = await browser.newPage();
        await page.goto(origin);
        return page.evaluate(
          async ({ url, token }) => {
            try {
              // A JSON body and a bearer token: the browser sends a preflight first.
              const response = await fetch(`${url}/collections/`, {
                method: 'POST',
                headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
                body: JSON.stringify({ name: `From ${location.origin}` }),
              });
              return { status: response.status, requestId: response.headers.get('X-Request-Id'), body: await response.json() };
            } catch (error) {
              return { blocked: String(error) };
            }
          },
          { url: worker.url, token: owner.token },
        );
      };
      const allowed = await call(pages.allowed);
      expect(allowed).toMatchObject({ status: 200, body: { name: `From ${pages.allowed}` } });
      expect((allowed as { requestId: string }).requestId).toBeTruthy();

      const refused = await call(pages.refused);
      expect(refused).toEqual({ blocked: expect.stringMatching(/Failed to fetch/) });
      // Refused at the preflight: the collection was never created.
      const listed = await api('GET', '/collections/', { token: owner.token });
      expect(listed.body.map((c: { name: string }) => c.name)).not.toContain(`From ${pages.refused}`);
    } finally {
      await browser.close();
    }
  });
});
