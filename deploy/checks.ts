import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { CheckResult } from './check-result.ts';
import { hyperdriveCachingVerdict } from './hyperdrive.ts';
import { checkMigrationDates } from './migrations.ts';
import { checkPendingMigrations } from './pending-migrations.ts';
import { checkQStashAccount, checkQStashRegion } from './qstash-regions.ts';
import { parseSecretList, secretsCheck } from './secrets.ts';
import { problemsOf, splitSettings, unknownSettings } from './settings.ts';
import { checkTraces } from './traces.ts';
import { WORKERS } from './workers.ts';
import type { Wrangler, WranglerOutput } from './wrangler.ts';

export type DeployMode = 'dry-run' | 'check' | 'deploy';

export interface CheckInputs {
  mode: DeployMode;
  root: string;
  /** The settings file, parsed. */
  all: Record<string, string>;
  wrangler: Wrangler;
  fetcher?: typeof fetch;
  /** The deployed database (DATABASE_URL in the shell), whose applied migrations are compared with the files. */
  databaseUrl?: string;
}

export const PLACEHOLDER_HYPERDRIVE_ID = /^0{32}$/;

/**
 * Everything a deploy must get right that no local test can see, checked before anything is uploaded:
 * each worker's settings against its own validation, the migrations' dates and which of them the database
 * has not applied, the QStash region and account, Hyperdrive's query caching, and which secrets the deploy
 * would remove. The dry run (CI) asks no account; `--check` and the deploy ask Cloudflare, QStash and the
 * database where they can, and say where they cannot.
 */
export async function runChecks(inputs: CheckInputs): Promise<{ results: CheckResult[]; held: Map<string, string[]> }> {
  const { mode, root, all, wrangler } = inputs;
  const results: CheckResult[] = [];
  const held = new Map<string, string[]>();
  // The account reads start at once and run side by side: each wrangler start takes seconds.
  const id = all.HYPERDRIVE_ID ?? '';
  const placeholder = PLACEHOLDER_HYPERDRIVE_ID.test(id);
  const validId = /^[0-9a-f]{32}$/.test(id) && !placeholder;
  const hyperdrive = validId ? wrangler.read(['hyperdrive', 'get', id]) : undefined;
  const secretLists = new Map(
    mode === 'dry-run'
      ? []
      : WORKERS.map((worker) => [worker.name, wrangler.read(['secret', 'list', '--config', worker.config])] as const),
  );

  // The same problem on several workers (a shared setting) is said once, naming them all.
  const workersBy = new Map<string, string[]>();
  for (const worker of WORKERS) {
    for (const problem of problemsOf(worker, all)) workersBy.set(problem, [...(workersBy.get(problem) ?? []), worker.name]);
  }
  for (const [problem, names] of workersBy) {
    results.push({ status: 'fail', subject: `${names.join(', ')} worker${names.length > 1 ? 's' : ''}`, message: problem });
  }
  for (const name of unknownSettings(WORKERS, all)) {
    results.push({ status: 'warn', subject: name, message: 'read by no worker; is it misspelt?' });
  }

  if (!/^[0-9a-f]{32}$/.test(id) || (placeholder && mode !== 'dry-run')) {
    results.push({
      status: 'fail',
      subject: 'HYPERDRIVE_ID',
      message: 'the 32-character id `wrangler hyperdrive create` printed',
    });
  } else if (placeholder) {
    results.push({
      status: 'unchecked',
      subject: 'Hyperdrive',
      message: 'the placeholder id (a dry run): query caching is checked by --check and the deploy',
    });
  } else if (hyperdrive) {
    results.push(hyperdriveCachingVerdict(id, await hyperdrive));
  }

  results.push(checkTraces(root, WORKERS));

  const migrations = checkMigrationDates(root);
  for (const problem of migrations.problems) results.push({ status: 'fail', subject: 'supabase/migrations', message: problem });
  if (migrations.problems.length === 0) {
    const newest = [...migrations.files].sort().at(-1);
    results.push({
      status: 'pass',
      subject: 'supabase/migrations',
      message: `${migrations.files.length} migrations, none dated after the commit that added it (newest ${newest}); apply them with npx supabase db push`,
    });
  }
  results.push(await checkPendingMigrations({ mode, files: migrations.files, databaseUrl: inputs.databaseUrl }));
  if (!existsSync(join(root, 'node_modules/.bin/supabase'))) {
    results.push({
      status: 'warn',
      subject: 'supabase CLI',
      message: 'not installed: run npm ci (package.json pins the version)',
    });
  }

  const region = checkQStashRegion(all.QSTASH_URL);
  results.push(region);
  if (mode === 'dry-run') {
    results.push({
      status: 'unchecked',
      subject: 'QStash account',
      message: 'a dry run asks no account; --check and the deploy do',
    });
  } else if (region.status === 'pass' && all.QSTASH_URL && all.QSTASH_TOKEN) {
    results.push(
      await checkQStashAccount(
        {
          url: all.QSTASH_URL,
          token: all.QSTASH_TOKEN,
          currentSigningKey: all.QSTASH_CURRENT_SIGNING_KEY,
          nextSigningKey: all.QSTASH_NEXT_SIGNING_KEY,
        },
        inputs.fetcher,
      ),
    );
  }

  for (const worker of WORKERS) {
    const upload = splitSettings(worker, all);
    if (mode === 'dry-run') {
      results.push({
        status: 'pass',
        subject: `${worker.name} worker secrets`,
        message:
          `${Object.keys(upload.secrets).length} secrets (${Object.keys(upload.secrets).join(', ') || 'none'}) and ` +
          `${Object.keys(upload.vars).length} plain variables; a deploy removes any other secret the worker holds`,
      });
      continue;
    }
    const listed = parseSecretList(await (secretLists.get(worker.name) as Promise<WranglerOutput>));
    if ('names' in listed) held.set(worker.name, listed.names);
    results.push(secretsCheck(worker.name, listed, upload));
  }
  return { results, held };
}
