/**
 * Builds the API worker's static assets (wrangler.toml `[assets]`) into web/dist: the web app (Vite,
 * web/vite.config.ts) with the data files pdf.js fetches, and the /docs page with Swagger UI's files from
 * swagger-ui-dist, so that neither needs a CDN nor sits in the worker's bundle. Every wrangler start (`npm run dev`, the
 * tests, the benches) and `npm run deploy` runs it; it does nothing when its inputs have not changed.
 *
 *   npx tsx web/build.ts
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { build } from 'vite';

const root = new URL('..', import.meta.url).pathname;
const web = join(root, 'web');
export const WEB_DIST = join(web, 'dist');
// Beside the packages, not in web/dist, where it would be served.
const STAMP = join(root, 'node_modules/.cache/web-build-inputs');

const require = createRequire(import.meta.url);
const SWAGGER = ['swagger-ui-bundle.js', 'swagger-ui.css'].map((name) => require.resolve(`swagger-ui-dist/${name}`));
// What pdf.js fetches for some PDFs only (web/src/source/PdfView.tsx): the standard fonts a PDF may name without
// embedding them, the character maps of CJK text, colour profiles, and the decoders of JBIG2 and JPEG 2000 scans
// (their JavaScript forms: WebAssembly would need 'wasm-unsafe-eval' in the pages' policy). Not its scripting
// engine (quickjs), which the viewer never runs.
const PDFJS = dirname(require.resolve('pdfjs-dist/package.json'));
const PDFJS_DATA = ['cmaps', 'standard_fonts', 'iccs', 'wasm'];
const PDFJS_SKIPPED = /^quickjs|\.wasm$/;

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

/** Every input's path, size and modification time: a new stamp means a new build. */
function inputsStamp(): string {
  const inputs = [
    ...['app.html', 'vite.config.ts'].map((name) => join(web, name)),
    ...filesUnder(join(web, 'src')),
    ...filesUnder(join(web, 'public')),
    ...SWAGGER,
    join(root, 'package-lock.json'),
  ];
  return inputs
    .map((file) => {
      const { size, mtimeMs } = statSync(file);
      return `${file} ${size} ${mtimeMs}`;
    })
    .join('\n');
}

/**
 * Vite builds what NODE_ENV says, and vitest sets it to `test`: the tests' build was then 10 % larger
 * (libraries' development code), and, the inputs unchanged, a later `npm run dev` or deploy kept it.
 */
async function productionBuild(): Promise<void> {
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    await build({ configFile: join(web, 'vite.config.ts'), mode: 'production' });
  } finally {
    if (nodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = nodeEnv;
  }
}

async function buildNow(): Promise<void> {
  const stamp = inputsStamp();
  if (existsSync(join(WEB_DIST, 'app.html')) && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === stamp) return;
  await productionBuild();
  mkdirSync(join(WEB_DIST, 'docs'), { recursive: true });
  for (const file of SWAGGER) copyFileSync(file, join(WEB_DIST, 'docs', file.split('/').pop() as string));
  for (const folder of PDFJS_DATA) {
    mkdirSync(join(WEB_DIST, 'pdfjs', folder), { recursive: true });
    for (const name of readdirSync(join(PDFJS, folder))) {
      if (!PDFJS_SKIPPED.test(name)) copyFileSync(join(PDFJS, folder, name), join(WEB_DIST, 'pdfjs', folder, name));
    }
  }
  mkdirSync(dirname(STAMP), { recursive: true });
  writeFileSync(STAMP, stamp);
}

let building: Promise<void> | undefined;

/** Once per process: several workers starting together share one build. */
export function buildWebAssets(): Promise<void> {
  building ??= buildNow();
  return building;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await buildWebAssets();
  console.log(`web assets in ${WEB_DIST}`);
}
