import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The web app, built into web/dist with the rest of the API worker's static assets (web/build.ts).
// Preact with its JSX runtime; nothing is loaded from a CDN.
const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  root: here('.'),
  publicDir: here('public'),
  base: '/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: here('dist'),
    emptyOutDir: true,
    // One HTML page, app.html: the worker serves it for every page of the app (src/api/routes/pages.ts).
    rollupOptions: { input: here('app.html') },
    target: 'es2022',
  },
  logLevel: 'warn',
});
