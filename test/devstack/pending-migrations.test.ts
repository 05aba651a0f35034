import { readdirSync } from 'node:fs';
import postgres from 'postgres';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { appliedVersions, checkPendingMigrations } from '../../deploy/pending-migrations.ts';
import { freePort } from '../../devstack/ports.ts';
import { MIGRATIONS_DIR, migrate, RENAMED_MIGRATIONS } from '../../devstack/postgres/migrate.ts';
import { createPostgresServer, type RunningPostgres } from '../../devstack/postgres/server.ts';

// `npm run deploy -- --check` with DATABASE_URL, against the devstack's database (PGlite on the wire),
// which records its migrations in supabase_migrations.schema_migrations as the Supabase CLI does.
let pg: RunningPostgres;
let sql: postgres.Sql;
const files = readdirSync(MIGRATIONS_DIR).filter((name) => /^\d{14}_.+\.sql$/.test(name));
const check = () => checkPendingMigrations({ mode: 'check', files, databaseUrl: pg.url });

beforeAll(async () => {
  pg = await createPostgresServer({ host: '127.0.0.1', port: await freePort() });
  sql = postgres(pg.url, { max: 1, prepare: false, onnotice: () => {} });
});

afterAll(async () => {
  await sql?.end();
  await pg?.stop();
});

it('fails on a database no migration was pushed to, passes once migrated, and names what is pending', async () => {
  expect(await appliedVersions(pg.url)).toBeUndefined();
  expect(await check()).toMatchObject({ status: 'fail', message: expect.stringContaining('none was ever pushed') });

  await migrate(sql);
  expect(await check()).toMatchObject({
    status: 'pass',
    message: `all ${files.length} migrations are applied to the database at ${new URL(pg.url).host}/postgres`,
  });

  const newest = [...files].sort().at(-1) as string;
  await sql`delete from supabase_migrations.schema_migrations where version = ${newest.slice(0, 14)}`;
  const pending = await check();
  expect(pending.status).toBe('fail');
  expect(pending.message).toContain(`1 of ${files.length} migrations are not applied`);
  expect(pending.message).toContain(newest);
  await sql`insert into supabase_migrations.schema_migrations (version, name) values (${newest.slice(0, 14)}, 'restored')`;
}, 120_000);

it('warns about a migration only the database has, and asks for the repair of renamed versions', async () => {
  await sql`insert into supabase_migrations.schema_migrations (version, name) values ('29991231235959', 'from_a_newer_checkout')`;
  expect(await check()).toMatchObject({ status: 'warn', message: expect.stringContaining('29991231235959') });
  await sql`delete from supabase_migrations.schema_migrations where version = '29991231235959'`;

  const [old, renamed] = Object.entries(RENAMED_MIGRATIONS)[0] as [string, string];
  await sql`update supabase_migrations.schema_migrations set version = ${old} where version = ${renamed}`;
  expect(await check()).toMatchObject({ status: 'fail', message: expect.stringContaining('migration repair') });
  await sql`update supabase_migrations.schema_migrations set version = ${renamed} where version = ${old}`;
  expect((await check()).status).toBe('pass');
});

it('says NOT CHECKED, naming the database but not its password, when it cannot be reached', async () => {
  const port = await freePort();
  const result = await checkPendingMigrations({
    mode: 'deploy',
    files,
    databaseUrl: `postgres://postgres:do-not-print@127.0.0.1:${port}/postgres`,
  });
  expect(result.status).toBe('unchecked');
  expect(result.message).toContain(`the database at 127.0.0.1:${port}/postgres could not be read`);
  expect(result.message).not.toContain('do-not-print');
});
