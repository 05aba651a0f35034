import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Bundles every worker the way `wrangler deploy` would, so bundling errors show up
// in the test run rather than in a deploy.
const root = new URL('..', import.meta.url).pathname;
const configs = [
  'wrangler.toml',
  ...readdirSync(join(root, 'workers'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(root, 'workers', entry.name, 'wrangler.toml')))
    .map((entry) => join('workers', entry.name, 'wrangler.toml')),
];
for (const config of configs) {
  const outdir = mkdtempSync(join(tmpdir(), 'dry-run-'));
  execFileSync(join(root, 'node_modules/.bin/wrangler'), ['deploy', '--dry-run', '--config', config, '--outdir', outdir], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false' },
  });
  console.log(`wrangler deploy --dry-run: ${config} bundles`);
}
