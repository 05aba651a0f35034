import styles from 'swagger-ui-dist/swagger-ui.css';
import script from 'swagger-ui-dist/swagger-ui-bundle.js';
import type { App } from '../context.ts';

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>RAG service API</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="docs"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script>
    window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#docs', deepLinking: true, persistAuthorization: true });
  </script>
</body>
</html>`;

const CACHE = 'public, max-age=86400';

/** The interactive reference, served whole from the worker so it works with no CDN. */
export function registerDocsRoutes(app: App) {
  app.get('/docs', (c) => c.html(PAGE));
  app.get('/docs/assets/swagger-ui-bundle.js', (c) =>
    c.body(script, 200, { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': CACHE }),
  );
  app.get('/docs/assets/swagger-ui.css', (c) =>
    c.body(styles, 200, { 'Content-Type': 'text/css; charset=utf-8', 'Cache-Control': CACHE }),
  );
}
