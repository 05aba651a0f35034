import { describe, expect, it } from 'vitest';
import { checkPendingMigrations, compareMigrations, databaseLabel, migrationsVerdict } from '../../deploy/pending-migrations.ts';

const files = ['20261121224401_foundation.sql', '20261121230839_ingestion.sql', '20261127130300_sources.sql'];
const where = 'db.example.supabase.co:5432/postgres';

describe('pending migrations: the files against supabase_migrations.schema_migrations', () => {
  it('passes when every file is recorded', () => {
    expect(compareMigrations(files, ['20261121224401', '20261121230839', '20261127130300'])).toEqual({
      pending: [],
      unknown: [],
      renamed: [],
    });
    expect(migrationsVerdict(files, ['20261121224401', '20261121230839', '20261127130300'], where)).toEqual({
      status: 'pass',
      subject: 'database migrations',
      message: `all 3 migrations are applied to the database at ${where}`,
    });
  });

  it('fails on a file the database has not recorded, naming it and the command', () => {
    const verdict = migrationsVerdict(files, ['20261121224401', '20261121230839'], where);
    expect(verdict.status).toBe('fail');
    expect(verdict.message).toContain('1 of 3 migrations are not applied');
    expect(verdict.message).toContain('20261127130300_sources.sql');
    expect(verdict.message).toContain('npx supabase db push');
  });

  it('fails on a database no migration was ever pushed to', () => {
    const verdict = migrationsVerdict(files, undefined, where);
    expect(verdict.status).toBe('fail');
    expect(verdict.message).toContain('3 of 3 migrations are not applied');
    expect(verdict.message).toContain('none was ever pushed');
  });

  it('warns when the database has migrations this checkout lacks (older workers over a newer schema)', () => {
    const recorded = ['20261121224401', '20261121230839', '20261127130300', '20261201090000'];
    expect(compareMigrations(files, recorded).unknown).toEqual(['20261201090000']);
    const verdict = migrationsVerdict(files, recorded, where);
    expect(verdict.status).toBe('warn');
    expect(verdict.message).toContain('20261201090000');
  });

  it('asks for the repair of versions recorded under their names before the rename, instead of calling them pending', () => {
    // 20261121000000 was 20261121224401's name before 2026-11-27.
    const recorded = ['20261121000000', '20261121230839', '20261127130300'];
    expect(compareMigrations(files, recorded)).toEqual({
      pending: [],
      unknown: [],
      renamed: [{ old: '20261121000000', renamed: '20261121224401' }],
    });
    const verdict = migrationsVerdict(files, recorded, where);
    expect(verdict.status).toBe('fail');
    expect(verdict.message).toContain('npx supabase migration repair --status reverted <old>');
  });

  it('lists at most three names and counts the rest', () => {
    const many = Array.from({ length: 6 }, (_, i) => `2026112700000${i}_m${i}.sql`);
    const verdict = migrationsVerdict(many, [], where);
    expect(verdict.message).toContain('20261127000002_m2.sql and 3 more');
  });

  it('names the database by host and name, never with its password', () => {
    expect(databaseLabel('postgres://postgres.ref:s3cret@aws-0-eu.pooler.supabase.com:5432/postgres')).toBe(
      'aws-0-eu.pooler.supabase.com:5432/postgres',
    );
  });
});

describe('checkPendingMigrations: what --check says', () => {
  it('asks nothing in a dry run', async () => {
    const read = async () => {
      throw new Error('a dry run must not read the database');
    };
    const result = await checkPendingMigrations({ mode: 'dry-run', files, databaseUrl: 'postgres://x', read });
    expect(result).toMatchObject({ status: 'unchecked', message: expect.stringContaining('a dry run asks no database') });
  });

  it('says NOT CHECKED and why without DATABASE_URL', async () => {
    for (const mode of ['check', 'deploy'] as const) {
      const result = await checkPendingMigrations({ mode, files, databaseUrl: undefined });
      expect(result.status).toBe('unchecked');
      expect(result.message).toContain('set DATABASE_URL');
    }
  });

  it('says NOT CHECKED when the database cannot be read, without its password', async () => {
    const read = async () => {
      throw new Error('password authentication failed (tried s3cret)');
    };
    const result = await checkPendingMigrations({
      mode: 'check',
      files,
      databaseUrl: 'postgres://postgres:s3cret@db.example.supabase.co:5432/postgres',
      read,
    });
    expect(result.status).toBe('unchecked');
    expect(result.message).toContain('could not be read (password authentication failed');
    expect(result.message).not.toContain('s3cret');
  });

  it('compares what it read', async () => {
    const result = await checkPendingMigrations({
      mode: 'deploy',
      files,
      databaseUrl: 'postgres://postgres:pw@db.example.supabase.co:5432/postgres',
      read: async () => ['20261121224401'],
    });
    expect(result).toMatchObject({ status: 'fail', message: expect.stringContaining('2 of 3 migrations are not applied') });
  });
});
