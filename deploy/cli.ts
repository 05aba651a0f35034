import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildWebAssets } from '../web/build.ts';
import { formatCheck } from './check-result.ts';
import { type DeployMode, runChecks } from './checks.ts';
import { removeSecrets, staleSecrets } from './secrets.ts';
import { parseEnvFile, splitSettings, withHyperdriveId } from './settings.ts';
import { type DeployedWorker, WORKERS } from './workers.ts';
import { localWrangler } from './wrangler.ts';

// `npm run deploy`: checks one settings file and the accounts it names (deploy/checks.ts), then deploys
// the ingest, scoring and API workers in that order, each with exactly the settings it reads: keys and
// tokens as secrets (--secrets-file), the rest as plain variables (--var), secrets it no longer has in
// the file removed, and the Hyperdrive id put into its config. wrangler keeps the terminal, so its
// first-run questions are seen. README.md → Deploy.
const root = new URL('..', import.meta.url).pathname;
const { values: flags } = parseArgs({
  options: {
    settings: { type: 'string', default: '.env.production' },
    check: { type: 'boolean', default: false },
    'dry-run': { type: 'boolean', default: false },
  },
});
const mode: DeployMode = flags['dry-run'] ? 'dry-run' : flags.check ? 'check' : 'deploy';

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

const wrangler = localWrangler(root);
console.log(`deploy: checking ${flags.settings}${mode === 'dry-run' ? ' (dry run: no account is asked)' : ''}`);
const { results, held } = await runChecks({ mode, root, all, wrangler, databaseUrl: process.env.DATABASE_URL || undefined });
for (const result of results) console.log(formatCheck(result));
const failed = results.filter((result) => result.status === 'fail').length;
const unchecked = results.filter((result) => result.status === 'unchecked').length;
if (failed > 0) fail(`${flags.settings} is not ready: ${failed} problem${failed > 1 ? 's' : ''} above (FAIL)`);
if (mode === 'check') {
  console.log(
    unchecked > 0
      ? `deploy: nothing wrong found, but ${unchecked} check${unchecked > 1 ? 's' : ''} could not run (NOT CHECKED above); the deploy runs them again and stops if they still cannot`
      : `deploy: ${flags.settings} and the accounts it names are ready for the ${WORKERS.length} workers`,
  );
  process.exit(0);
}
if (mode === 'deploy' && unchecked > 0) {
  fail(
    `not deploying: ${unchecked} check${unchecked > 1 ? 's' : ''} above could not run (NOT CHECKED); fix what they name and run it again`,
  );
}

/** A step failed: stops the loop, and its `finally` still removes the files that hold secrets. */
class Stop extends Error {}

async function removeStale(worker: DeployedWorker, names: string[], why: string) {
  if (names.length === 0) return;
  console.log(`deploy: removing from the ${worker.name} worker the secrets ${why}: ${names.join(', ')}`);
  if (!(await removeSecrets(wrangler, worker.config, names, scratch))) {
    throw new Stop(`removing secrets from the ${worker.name} worker failed; the workers before it are deployed`);
  }
}

await buildWebAssets();
const scratch = mkdtempSync(join(tmpdir(), 'rag-deploy-'));

const urls: string[] = [];
try {
  for (const worker of WORKERS) {
    const config = join(root, dirname(worker.config), '.wrangler.deploy.toml');
    const secretsFile = join(scratch, `${worker.name}.json`);
    const upload = splitSettings(worker, all);
    const stale = staleSecrets(held.get(worker.name) ?? [], upload);
    writeFileSync(config, withHyperdriveId(readFileSync(join(root, worker.config), 'utf8'), all.HYPERDRIVE_ID as string));
    writeFileSync(secretsFile, JSON.stringify(upload.secrets), { mode: 0o600 });
    try {
      if (mode === 'deploy') await removeStale(worker, stale.beforeUpload, 'now sent as plain variables');
      const args = ['deploy', '--config', config, '--secrets-file', secretsFile];
      for (const [name, value] of Object.entries(upload.vars)) args.push('--var', `${name}:${value}`);
      if (mode === 'dry-run') args.push('--dry-run', '--outdir', join(scratch, worker.name));
      console.log(`deploy: the ${worker.name} worker (${worker.config})`);
      const { status, entries } = await wrangler.run(args);
      if (status !== 0)
        throw new Stop(`wrangler deploy failed for the ${worker.name} worker; the workers before it are deployed`);
      if (mode === 'deploy') await removeStale(worker, stale.afterUpload, `no longer in ${flags.settings}`);
      const targets = entries.find((entry) => entry.type === 'deploy')?.targets as string[] | undefined;
      const url = targets?.find((target) => target.startsWith('https://'));
      urls.push(`  ${worker.name}: ${url ?? (mode === 'dry-run' ? 'bundled (dry run)' : 'deployed')}`);
    } finally {
      rmSync(config, { force: true });
    }
  }
} catch (error) {
  if (!(error instanceof Stop)) throw error;
  process.exitCode = 1;
  console.error(`deploy: ${error.message}`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
if (process.exitCode) process.exit();
console.log(`deploy: done\n${urls.join('\n')}`);
if (mode === 'deploy') {
  console.log(
    'Smoke-test it: RAG_API_URL=<api url> SUPABASE_URL=… SUPABASE_ANON_KEY=… SUPABASE_SERVICE_ROLE_KEY=… npm run test:deployed',
  );
}
