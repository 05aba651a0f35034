import { readFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { freePort } from '../../devstack/ports.ts';
import { DOCS_DIR } from './documents.ts';

const TYPES: Record<string, string> = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  csv: 'text/csv',
};

export const ARTICLE_HTML = `<!doctype html><html><head><title>Tidal energy explained</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a> Subscribe to our newsletter!</nav>
<article>
<h1>Tidal energy explained</h1>
<p>Tidal power converts the energy of the rising and falling sea into electricity. Unlike wind and sunlight,
the tides are predictable years ahead, which makes tidal stations attractive to grid operators.</p>
<h2>How a tidal barrage works</h2>
<p>A barrage is a dam across an estuary. Sluice gates let the flood tide in; at high water they close, and the
trapped water is released through turbines as the tide ebbs. The La Rance station in Brittany has worked this way since 1966.</p>
<h2>Tidal stream generators</h2>
<p>Stream generators are underwater turbines placed in fast currents, much like wind turbines in the sea. Water is
about eight hundred times denser than air, so slow currents still carry a great deal of energy.</p>
</article>
<footer>Copyright 2026 Example Media. Cookie settings. Privacy policy.</footer>
</body></html>`;

/**
 * Web pages for URL ingestion tests: fixtures, an article, redirects (including to
 * private addresses) and failures. The workers trust this origin explicitly; every
 * other loopback URL stays refused.
 */
export async function startPageServer() {
  const app = new Hono();
  app.get('/article.html', (c) => c.html(ARTICLE_HTML));
  app.get('/docs/:name', async (c) => {
    const name = c.req.param('name');
    if (!/^[\w.-]+$/.test(name)) return c.notFound();
    const bytes = await readFile(`${DOCS_DIR}${name}`).catch(() => null);
    if (!bytes) return c.notFound();
    const type = TYPES[name.split('.').pop() ?? ''] ?? 'application/octet-stream';
    return c.body(new Uint8Array(bytes), 200, { 'content-type': type });
  });
  // The same fixtures without a length (in pieces, chunked) or gzip-compressed (the length is the
  // compressed body's): bodies whose size is known only once they are read.
  app.get('/chunked/:name', async (c) => {
    const bytes = await readFile(`${DOCS_DIR}${c.req.param('name').replace(/[^\w.-]/g, '')}`).catch(() => null);
    if (!bytes) return c.notFound();
    let at = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at >= bytes.length) return controller.close();
        controller.enqueue(new Uint8Array(bytes.subarray(at, at + 16 * 1024)));
        at += 16 * 1024;
      },
    });
    return c.body(body, 200, { 'content-type': TYPES[c.req.param('name').split('.').pop() ?? ''] ?? 'application/octet-stream' });
  });
  app.get('/gzip/:name', async (c) => {
    const bytes = await readFile(`${DOCS_DIR}${c.req.param('name').replace(/[^\w.-]/g, '')}`).catch(() => null);
    if (!bytes) return c.notFound();
    const type = TYPES[c.req.param('name').split('.').pop() ?? ''] ?? 'application/octet-stream';
    return c.body(new Uint8Array(gzipSync(bytes)), 200, { 'content-type': type, 'content-encoding': 'gzip' });
  });
  app.get('/redirect', (c) => c.redirect(c.req.query('to') ?? '/article.html', 302));
  app.get('/status/:code', (c) => c.text('nope', Number(c.req.param('code')) as 404));
  app.get('/binary', (c) =>
    c.body(new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 3]), 200, { 'content-type': 'application/x-executable' }),
  );

  const port = await freePort();
  const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
