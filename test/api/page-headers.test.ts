import { describe, expect, it } from 'vitest';
import { stack } from '../support/client.ts';

// The browser headers of every HTML response, as the worker and the static assets send them;
// docs-browser.test.ts and the web app's browser tests check that the pages run under them.

const policyOf = (header: string | null) =>
  Object.fromEntries(
    (header ?? '')
      .split(';')
      .map((directive) => directive.trim().split(/\s+/))
      .filter(([name]) => name)
      .map(([name, ...sources]) => [name, sources]),
  ) as Record<string, string[]>;

describe('HTML responses', () => {
  const supabase = new URL(stack.supabaseUrl).origin;

  it('carry a CSP that allows this origin and Supabase only, forbid framing, sniffing and referrers', async () => {
    for (const path of [
      '/app/',
      '/app/collections/00000000-0000-4000-8000-000000000000',
      '/login',
      '/join/some-token',
      '/docs',
      '/docs/',
    ]) {
      const response = await fetch(`${stack.apiUrl}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type'), path).toMatch(/^text\/html/);
      const policy = policyOf(response.headers.get('content-security-policy'));
      expect(policy, path).toEqual({
        'default-src': ["'self'"],
        'connect-src': ["'self'", supabase],
        'img-src': ["'self'", 'data:', supabase],
        'object-src': ["'none'"],
        'base-uri': ["'none'"],
        'form-action': ["'self'"],
        'frame-ancestors': ["'none'"],
      });
      expect(response.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(response.headers.get('referrer-policy'), path).toBe('no-referrer');
      expect(response.headers.get('x-frame-options'), path).toBe('DENY');
      await response.body?.cancel();
    }
  });

  it('carry it too where the static assets serve a page file at its own path, without the Supabase origin', async () => {
    for (const path of ['/app.html', '/docs/index.html']) {
      const response = await fetch(`${stack.apiUrl}${path}`);
      expect(response.status, path).toBe(200);
      expect(await response.text(), path).toMatch(/^<!doctype html>/i);
      const policy = policyOf(response.headers.get('content-security-policy'));
      expect(policy['default-src'], path).toEqual(["'self'"]);
      expect(policy['connect-src'], path).toBeUndefined();
      expect(policy['frame-ancestors'], path).toEqual(["'none'"]);
      expect(response.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(response.headers.get('referrer-policy'), path).toBe('no-referrer');
    }
    // The scripts and styles beside them are never sniffed as anything else.
    const script = await fetch(`${stack.apiUrl}/docs/swagger-ui-bundle.js`);
    expect(script.headers.get('x-content-type-options')).toBe('nosniff');
    await script.body?.cancel();
    // The worker's _headers file is read by wrangler, not served.
    expect((await fetch(`${stack.apiUrl}/_headers`)).status).toBe(404);
  });

  it('the /docs page runs no inline script and keeps no credentials', async () => {
    const page = await (await fetch(`${stack.apiUrl}/docs`)).text();
    expect(page).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(page).toContain('<script src="/docs/docs.js"></script>');
    const script = await (await fetch(`${stack.apiUrl}/docs/docs.js`)).text();
    expect(script).toContain('persistAuthorization: false');
  });
});
