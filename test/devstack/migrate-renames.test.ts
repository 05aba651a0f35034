import postgres from 'postgres';
import { afterAll, expect, it } from 'vitest';
import { migrate, RENAMED_MIGRATIONS } from '../../devstack/postgres/migrate.ts';
import { createTestDatabase } from '../support/real-postgres.ts';

const created = await createTestDatabase();
const sql = created ? postgres(created.url, { max: 1, onnotice: () => {} }) : undefined;
afterAll(async () => {
  await sql?.end();
  await created?.drop();
});

// A `.data/pglite` (or DATABASE_URL) migrated before the rename records the old versions.
it.skipIf(!sql)(
  'renames the versions a database recorded under the old names, and applies nothing twice',
  async () => {
    const db = sql as postgres.Sql;
    const first = await migrate(db);
    expect(first.length).toBeGreaterThan(10);
    for (const [old, renamed] of Object.entries(RENAMED_MIGRATIONS)) {
      await db`update supabase_migrations.schema_migrations set version = ${old} where version = ${renamed}`;
    }

    const lines: string[] = [];
    expect(await migrate(db, (line) => lines.push(line))).toEqual([]);
    expect(lines).toEqual([
      `renamed ${Object.keys(RENAMED_MIGRATIONS).length} recorded migration versions to the migrations' new names`,
    ]);
    const versions = (
      await db<{ version: string }[]>`select version from supabase_migrations.schema_migrations order by version`
    ).map((row) => row.version);
    expect(versions).toEqual(first.map((file) => file.slice(0, 14)));
  },
  60_000,
);
