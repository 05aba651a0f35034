import { unavailable } from '#core/errors.ts';
import { loadConfig } from '../config.ts';
import type { App } from '../context.ts';
import { pageSecurityHeaders } from '../middleware/page-security.ts';

/**
 * The pages: the web app's and the API reference. The app's live under /app/, at /login and at
 * /join/<token>, apart from every API path, so a program and a browser asking for the same URL
 * never get different things. Each is the app's one HTML file from the static assets (web/, built
 * into web/dist); the app routes in the browser, and sends anyone without a session to /login.
 * Each carries the pages' security headers (middleware/page-security.ts).
 */
const PAGES: [path: string, file: string][] = [
  ['/app', '/app.html'],
  ['/app/*', '/app.html'],
  ['/login', '/app.html'],
  ['/join/:token', '/app.html'],
  // The API reference: Swagger UI, whose script and styles sit beside it in the assets.
  ['/docs', '/docs/index.html'],
];

export function registerPageRoutes(app: App) {
  app.get('/', (c) => c.redirect('/app/', 302));

  // What the browser needs to sign people in, all of it public by design (Supabase's publishable key).
  app.get('/app/config.json', (c) => {
    const { SUPABASE_URL, SUPABASE_ANON_KEY } = loadConfig(c.env);
    if (!SUPABASE_ANON_KEY) throw unavailable('The web app is not set up on this deployment: SUPABASE_ANON_KEY is not set');
    return c.json({ supabase_url: SUPABASE_URL, supabase_anon_key: SUPABASE_ANON_KEY });
  });

  for (const [path, file] of PAGES) {
    app.get(path, async (c) => {
      const { ASSETS, SUPABASE_URL } = loadConfig(c.env);
      if (!ASSETS) throw unavailable('Pages are not set up on this deployment: the ASSETS binding is missing');
      const page = await ASSETS.fetch(new URL(file, c.req.url));
      return new Response(page.body, {
        status: page.status,
        headers: {
          'Content-Type': 'text/html; charset=utf-8',
          'Cache-Control': 'no-cache',
          ...pageSecurityHeaders(SUPABASE_URL),
        },
      });
    });
  }
}
