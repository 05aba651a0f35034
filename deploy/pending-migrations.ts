import postgres from 'postgres';
import { RENAMED_MIGRATIONS } from '../devstack/postgres/migrate.ts';
import type { CheckResult } from './check-result.ts';
import type { DeployMode } from './checks.ts';

const SUBJECT = 'database migrations';
const PUSH = 'npx supabase db push';

/** What supabase/migrations holds against what the database records as applied. */
export interface MigrationComparison {
  /** Files whose version the database has not recorded: the schema is behind these workers. */
  pending: string[];
  /** Versions the database records that no file has: it was migrated from a newer checkout. */
  unknown: string[];
  /** Versions recorded under a migration's name before the rename of 2026-11-27 (README → Deploy, step 2). */
  renamed: { old: string; renamed: string }[];
}

const versionOf = (file: string) => /^(\d{14})_.+\.sql$/.exec(file)?.[1];

export function compareMigrations(files: string[], recorded: string[]): MigrationComparison {
  const applied = new Set(recorded);
  const local = new Set(files.map(versionOf).filter((version): version is string => version !== undefined));
  const renamed = recorded
    .filter((version) => RENAMED_MIGRATIONS[version] !== undefined)
    .map((old) => ({ old, renamed: RENAMED_MIGRATIONS[old] as string }));
  const renamedTo = new Set(renamed.map((pair) => pair.renamed));
  return {
    pending: files
      .filter((file) => {
        const version = versionOf(file);
        return version !== undefined && !applied.has(version) && !renamedTo.has(version);
      })
      .sort(),
    unknown: recorded.filter((version) => !local.has(version) && RENAMED_MIGRATIONS[version] === undefined).sort(),
    renamed,
  };
}

const listed = (names: string[]) =>
  names.length > 3 ? `${names.slice(0, 3).join(', ')} and ${names.length - 3} more` : names.join(', ');

/**
 * The verdict on one comparison. Pending migrations fail: the workers being deployed may read what they
 * add, so the schema goes first (docs/operations.md → "Upgrades"). Versions the database has and this
 * checkout lacks are a warning: deploying older workers over a newer schema is what a rollback does, and is
 * safe only while every migration since kept working with them. `recorded` undefined: no migration was ever
 * pushed (there is no supabase_migrations.schema_migrations).
 */
export function migrationsVerdict(files: string[], recorded: string[] | undefined, where: string): CheckResult {
  const { pending, unknown, renamed } = compareMigrations(files, recorded ?? []);
  if (renamed.length > 0) {
    return {
      status: 'fail',
      subject: SUBJECT,
      message:
        `the database at ${where} records ${renamed.length} migrations under their names before the rename of 2026-11-27 ` +
        `(${renamed[0]?.old} is now ${renamed[0]?.renamed}): for each pair in RENAMED_MIGRATIONS (devstack/postgres/migrate.ts) run ` +
        '`npx supabase migration repair --status reverted <old>` and `--status applied <new>` (README.md → Deploy, step 2)',
    };
  }
  if (pending.length > 0) {
    return {
      status: 'fail',
      subject: SUBJECT,
      message:
        `${pending.length} of ${files.length} migrations are not applied to the database at ${where}` +
        `${recorded === undefined ? ' (it has no supabase_migrations.schema_migrations: none was ever pushed)' : ''}: ` +
        `${listed(pending)}. Apply them before the workers: ${PUSH}`,
    };
  }
  if (unknown.length > 0) {
    return {
      status: 'warn',
      subject: SUBJECT,
      message:
        `the database at ${where} has ${unknown.length} migrations this checkout does not (${listed(unknown)}): ` +
        'these workers are older than its schema, which is safe only if those migrations kept working with them',
    };
  }
  return {
    status: 'pass',
    subject: SUBJECT,
    message: `all ${files.length} migrations are applied to the database at ${where}`,
  };
}

/** The database named without its password: host, port and database. */
export function databaseLabel(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    return `${url.host}${url.pathname}`;
  } catch {
    return 'DATABASE_URL';
  }
}

function passwordOf(databaseUrl: string): string | undefined {
  try {
    const { password } = new URL(databaseUrl);
    return password ? decodeURIComponent(password) : undefined;
  } catch {
    return undefined;
  }
}

/** The versions the Supabase CLI (and the devstack) recorded, or undefined when the table does not exist. */
export async function appliedVersions(databaseUrl: string): Promise<string[] | undefined> {
  const sql = postgres(databaseUrl, { max: 1, connect_timeout: 10, idle_timeout: 1, prepare: false, onnotice: () => {} });
  try {
    const [table] = await sql<{ found: string | null }[]>`
      select to_regclass('supabase_migrations.schema_migrations')::text as found`;
    if (!table?.found) return undefined;
    return (await sql<{ version: string }[]>`select version from supabase_migrations.schema_migrations`).map(
      (row) => row.version,
    );
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/**
 * `--check` and the deploy compare supabase/migrations with the deployed database, when DATABASE_URL (the
 * connection string Hyperdrive was made from, as for `npm run reindex`) is in the shell. Without it, or when
 * the database cannot be read, the check says so (NOT CHECKED), and the deploy does not go ahead.
 */
export async function checkPendingMigrations(inputs: {
  mode: DeployMode;
  files: string[];
  databaseUrl: string | undefined;
  read?: typeof appliedVersions;
}): Promise<CheckResult> {
  if (inputs.mode === 'dry-run') {
    return {
      status: 'unchecked',
      subject: SUBJECT,
      message: 'a dry run asks no database; --check and the deploy compare supabase/migrations with it (DATABASE_URL)',
    };
  }
  if (!inputs.databaseUrl) {
    return {
      status: 'unchecked',
      subject: SUBJECT,
      message:
        'not compared with the deployed database: set DATABASE_URL in the shell to the connection string Hyperdrive was made from. ' +
        `Whatever it would say, apply new migrations before the workers: ${PUSH}`,
    };
  }
  const where = databaseLabel(inputs.databaseUrl);
  try {
    return migrationsVerdict(inputs.files, await (inputs.read ?? appliedVersions)(inputs.databaseUrl), where);
  } catch (error) {
    // postgres.js words connection and authentication failures without the password; taken out all the same.
    const password = passwordOf(inputs.databaseUrl);
    const message = error instanceof Error ? error.message : String(error);
    const reason = password ? message.replaceAll(password, '…') : message;
    return {
      status: 'unchecked',
      subject: SUBJECT,
      message: `the database at ${where} could not be read (${reason.slice(0, 200)}); pending migrations were not checked`,
    };
  }
}
