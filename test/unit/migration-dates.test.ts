import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkMigrationDates, committedAt, migrationDateProblems, versionTime } from '../../deploy/migrations.ts';
import { RENAMED_MIGRATIONS } from '../../devstack/postgres/migrate.ts';

const root = new URL('../../', import.meta.url).pathname;
// A shallow clone has no commit that added the old names.
const shallow =
  spawnSync('git', ['rev-parse', '--is-shallow-repository'], { cwd: root, encoding: 'utf8' }).stdout.trim() !== 'false';

describe('migrations are dated no later than the commit that added them', () => {
  it('holds for every file in supabase/migrations (a file not yet committed: no later than now)', () => {
    const { files, problems } = checkMigrationDates(root);
    expect(files.length).toBeGreaterThan(10);
    expect(problems).toEqual([]);
  });

  it.skipIf(shallow)('refuses the names they had before, which were dated up to five days after their commits', () => {
    const added = committedAt(root);
    const old = Object.keys(RENAMED_MIGRATIONS).map((version) =>
      [...added.keys()].find((file) => file.startsWith(`${version}_`)),
    );
    expect(old).not.toContain(undefined);
    const problems = migrationDateProblems(old as string[], added, new Date());
    // Only 20261121000000 came before its commit (22:44 that day); the other ten were ahead of theirs.
    expect(problems).toHaveLength(10);
    expect(problems).toContainEqual(
      expect.stringMatching(/^20261201000000_programs\.sql: dated 2026-12-01T00:00:00\.000Z, after the commit/),
    );
  });

  it('compares a file git has not seen with now, and names a malformed or doubled version', () => {
    const now = new Date('2026-11-27T00:00:00Z');
    expect(migrationDateProblems(['20261126235959_a.sql', '20261127000001_b.sql'], new Map(), now)).toEqual([
      expect.stringMatching(/^20261127000001_b\.sql: dated .*, after now \(2026-11-27T00:00:00\.000Z\)/),
    ]);
    expect(migrationDateProblems(['2026_x.sql', '20261399000000_y.sql'], new Map(), now)).toEqual([
      expect.stringContaining('20261399000000_y.sql: not named'),
      expect.stringContaining('2026_x.sql: not named'),
    ]);
    expect(migrationDateProblems(['20261101000000_a.sql', '20261101000000_b.sql'], new Map(), now)).toEqual([
      '20261101000000_b.sql: the same version as 20261101000000_a.sql',
    ]);
  });

  it('reads a version as UTC', () => {
    expect(versionTime('20261123200229_sweeps.sql')?.toISOString()).toBe('2026-11-23T20:02:29.000Z');
    expect(versionTime('readme.md')).toBeUndefined();
  });

  it('maps every old version to a file that exists, in the same order', () => {
    const files = readdirSync(`${root}supabase/migrations`);
    const renamed = Object.entries(RENAMED_MIGRATIONS);
    for (const [, version] of renamed) expect(files.some((file) => file.startsWith(`${version}_`))).toBe(true);
    const byOld = renamed.sort(([a], [b]) => a.localeCompare(b)).map(([, next]) => next);
    expect(byOld).toEqual([...byOld].sort());
  });
});
