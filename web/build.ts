/**
 * Builds the API worker's static assets (wrangler.toml `[assets]`, web/dist): the /docs page with
 * Swagger UI's files from swagger-ui-dist, so the reference needs no CDN and stays out of the
 * worker's bundle. `npm run dev`, the tests and `npm run deploy` run it before wrangler starts.
 *
 *   npx tsx web/build.ts
 */
import { copyFileSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
export const WEB_DIST = join(root, 'web/dist');

const require = createRequire(import.meta.url);
const FILES: [from: string, to: string][] = [
  [join(root, 'web/docs/index.html'), 'docs/index.html'],
  [require.resolve('swagger-ui-dist/swagger-ui-bundle.js'), 'docs/swagger-ui-bundle.js'],
  [require.resolve('swagger-ui-dist/swagger-ui.css'), 'docs/swagger-ui.css'],
];

const sameFile = (a: string, b: string) => {
  try {
    const [x, y] = [statSync(a), statSync(b)];
    return x.size === y.size && x.mtimeMs <= y.mtimeMs;
  } catch {
    return false;
  }
};

/** Copies what changed. Each file lands whole (copy, then rename): several processes may build at once. */
export function buildWebAssets(): void {
  for (const [from, to] of FILES) {
    const target = join(WEB_DIST, to);
    if (sameFile(from, target)) continue;
    mkdirSync(dirname(target), { recursive: true });
    const partial = `${target}.${process.pid}.partial`;
    copyFileSync(from, partial);
    renameSync(partial, target);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  buildWebAssets();
  console.log(`web assets in ${WEB_DIST}`);
}
