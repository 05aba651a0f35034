import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildWebAssets } from '../web/build.ts';
import { parseEnvFile, problemsOf, settingsFor, unknownSettings, withHyperdriveId } from './settings.ts';
import { WORKERS } from './workers.ts';

// `npm run deploy`: checks one settings file against what each worker validates, then deploys the
// ingest, scoring and API workers in that order, each with exactly the settings it reads
// (wrangler deploy --secrets-file) and the Hyperdrive id put into its config. README.md → Deploy.
const root = new URL('..', import.meta.url).pathname;
const { values: flags } = parseArgs({
  options: {
    settings: { type: 'string', default: '.env.production' },
    check: { type: 'boolean', default: false },
    'dry-run': { type: 'boolean', default: false },
  },
});

const fail = (message: string): never => {
  console.error(`deploy: ${message}`);
  process.exit(1);
};

let text = '';
try {
  text = readFileSync(join(root, flags.settings), 'utf8');
} catch {
  fail(`no settings file at ${flags.settings}: copy .dev.vars.example to it and fill it in (README.md → Deploy)`);
}
const all = (() => {
  try {
    return parseEnvFile(text);
  } catch (error) {
    return fail(`${flags.settings}: ${(error as Error).message}`);
  }
})();

const problems = WORKERS.flatMap((worker) => problemsOf(worker, all).map((problem) => `  ${worker.name} worker: ${problem}`));
// The placeholder bundles (a dry run), but a deployed worker could not reach its database.
const placeholderId = /^0{32}$/.test(all.HYPERDRIVE_ID ?? '');
if (!/^[0-9a-f]{32}$/.test(all.HYPERDRIVE_ID ?? '') || (placeholderId && !flags['dry-run'])) {
  problems.push('  HYPERDRIVE_ID: the 32-character id `wrangler hyperdrive create` printed');
}
for (const name of unknownSettings(WORKERS, all)) console.warn(`deploy: ${name} is read by no worker; is it misspelt?`);
if (problems.length > 0) fail(`${flags.settings} is not ready:\n${problems.join('\n')}`);
if (flags.check) {
  console.log(`deploy: ${flags.settings} has every setting each of the ${WORKERS.length} workers needs`);
  process.exit(0);
}

await buildWebAssets();
const scratch = mkdtempSync(join(tmpdir(), 'rag-deploy-'));
const urls: string[] = [];
try {
  for (const worker of WORKERS) {
    const config = join(root, dirname(worker.config), '.wrangler.deploy.toml');
    const secrets = join(scratch, `${worker.name}.json`);
    writeFileSync(config, withHyperdriveId(readFileSync(join(root, worker.config), 'utf8'), all.HYPERDRIVE_ID as string));
    writeFileSync(secrets, JSON.stringify(settingsFor(worker, all)), { mode: 0o600 });
    try {
      const args = ['deploy', '--config', config, '--secrets-file', secrets];
      if (flags['dry-run']) args.push('--dry-run', '--outdir', join(scratch, worker.name));
      console.log(`deploy: the ${worker.name} worker (${worker.config})`);
      const run = spawnSync(join(root, 'node_modules/.bin/wrangler'), args, {
        cwd: root,
        encoding: 'utf8',
        stdio: ['inherit', 'pipe', 'inherit'],
      });
      process.stdout.write(run.stdout ?? '');
      if (run.status !== 0) fail(`wrangler deploy failed for the ${worker.name} worker; the workers before it are deployed`);
      const url = /https:\/\/\S+\.workers\.dev/.exec(run.stdout ?? '')?.[0];
      urls.push(`  ${worker.name}: ${url ?? (flags['dry-run'] ? 'bundled (dry run)' : 'deployed')}`);
    } finally {
      rmSync(config, { force: true });
    }
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
console.log(`deploy: done\n${urls.join('\n')}`);
if (!flags['dry-run']) {
  console.log(
    'Smoke-test it: RAG_API_URL=<api url> SUPABASE_URL=… SUPABASE_ANON_KEY=… SUPABASE_SERVICE_ROLE_KEY=… npm run test:deployed',
  );
}
