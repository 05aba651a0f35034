import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Sql } from 'postgres';

const root = new URL('../..', import.meta.url).pathname;
export const MIGRATIONS_DIR = join(root, 'supabase/migrations');
const AUTH_SCHEMA = join(root, 'devstack/auth/schema.sql');

/**
 * Versions the migrations had before they were renamed to the times of the commits that added them
 * (they had been dated ahead, up to 2026-12-01, so a new `supabase migration new` sorted before them and
 * `supabase db push` refused it). A database migrated under the old names, such as a kept `.data/pglite`,
 * has its record renamed here rather than seeing every migration as new and failing on the first table.
 */
export const RENAMED_MIGRATIONS: Readonly<Record<string, string>> = {
  '20261121000000': '20261121224401',
  '20261122000000': '20261121230839',
  '20261123000000': '20261122004531',
  '20261124000000': '20261123165652',
  '20261125090000': '20261123185417',
  '20261126000000': '20261123191717',
  '20261127000000': '20261123194246',
  '20261128000000': '20261123200229',
  '20261129000000': '20261123230754',
  '20261130000000': '20261124022853',
  '20261201000000': '20261126110504',
};

/**
 * Applies the auth stand-in and then every migration not yet recorded, in file
 * order. The record lives in supabase_migrations.schema_migrations, the table the
 * Supabase CLI keeps, so a database migrated here looks the same to `supabase db push`.
 */
export async function migrate(sql: Sql, log: (line: string) => void = () => {}): Promise<string[]> {
  await sql.unsafe(await readFile(AUTH_SCHEMA, 'utf8'));
  await sql.unsafe(`
    create schema if not exists supabase_migrations;
    create table if not exists supabase_migrations.schema_migrations (
      version text primary key, statements text[], name text
    );`);
  await renameRecordedVersions(sql, log);

  const applied = new Set(
    (await sql<{ version: string }[]>`select version from supabase_migrations.schema_migrations`).map((r) => r.version),
  );
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d+_.+\.sql$/.test(f)).sort();
  const done: string[] = [];
  for (const file of files) {
    const [version, ...rest] = file.replace(/\.sql$/, '').split('_');
    if (!version || applied.has(version)) continue;
    const text = await readFile(join(MIGRATIONS_DIR, file), 'utf8');
    await sql.begin(async (tx) => {
      await tx.unsafe(text);
      await tx`insert into supabase_migrations.schema_migrations (version, statements, name)
               values (${version}, ${[text]}, ${rest.join('_')})`;
    });
    log(`applied migration ${file}`);
    done.push(file);
  }
  return done;
}

async function renameRecordedVersions(sql: Sql, log: (line: string) => void) {
  const old = Object.keys(RENAMED_MIGRATIONS);
  const recorded = await sql<{ version: string }[]>`
    select version from supabase_migrations.schema_migrations where version in ${sql(old)}`;
  if (recorded.length === 0) return;
  await sql.begin(async (tx) => {
    for (const { version } of recorded) {
      await tx`update supabase_migrations.schema_migrations set version = ${RENAMED_MIGRATIONS[version] as string}
               where version = ${version}`;
    }
  });
  log(`renamed ${recorded.length} recorded migration versions to the migrations' new names`);
}
