import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Sql } from 'postgres';

const root = new URL('..', import.meta.url).pathname;
export const MIGRATIONS_DIR = join(root, 'supabase/migrations');
const AUTH_SCHEMA = join(root, 'devstack/sql/auth-schema.sql');

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
