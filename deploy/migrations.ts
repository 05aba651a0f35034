import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

export const MIGRATIONS_PATH = 'supabase/migrations';

/** A migration's version: the UTC time `supabase migration new` names it with, YYYYMMDDHHMMSS. */
export function versionTime(file: string): Date | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})_.+\.sql$/.exec(file);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number) as number[];
  const time = new Date(Date.UTC(year as number, (month as number) - 1, day, hour, minute, second));
  // 20261332… would roll over into another date: not a time at all.
  return time.getUTCMonth() === (month as number) - 1 && time.getUTCDate() === day ? time : undefined;
}

/**
 * What is wrong with the migrations' names. `supabase db push` applies only migrations newer than the
 * newest the database has, so one dated ahead makes every migration written before that date wait or be
 * refused. Each file must be dated no later than the commit that added it; a file not yet committed, no
 * later than `now`.
 */
export function migrationDateProblems(files: string[], addedAt: ReadonlyMap<string, Date>, now: Date): string[] {
  const problems: string[] = [];
  const seen = new Map<string, string>();
  for (const file of files.filter((name) => name.endsWith('.sql')).sort()) {
    const time = versionTime(file);
    if (!time) {
      problems.push(`${file}: not named <YYYYMMDDHHMMSS>_<name>.sql (make it with \`date -u +%Y%m%d%H%M%S\`)`);
      continue;
    }
    const version = file.slice(0, 14);
    const twin = seen.get(version);
    if (twin) problems.push(`${file}: the same version as ${twin}`);
    seen.set(version, file);
    const committed = addedAt.get(file);
    const limit = committed ?? now;
    if (time.getTime() > limit.getTime()) {
      problems.push(
        `${file}: dated ${time.toISOString()}, after ${committed ? 'the commit that added it' : 'now'} (${limit.toISOString()}); ` +
          'a migration written before that date would sort before it and `supabase db push` would refuse it',
      );
    }
  }
  return problems;
}

/**
 * When each migration file was first committed under its present name, from `git log` (renames count as
 * an addition of the new name). Empty when there is no git history to ask (an exported tree): every file
 * is then compared with now.
 */
export function committedAt(root: string, path = MIGRATIONS_PATH): Map<string, Date> {
  const log = spawnSync('git', ['log', '--no-renames', '--diff-filter=A', '--name-only', '--format=%x00%cI', '--', path], {
    cwd: root,
    encoding: 'utf8',
  });
  const added = new Map<string, Date>();
  if (log.status !== 0) return added;
  // Newest commit first: the last one seen for a file is the one that first added it.
  for (const entry of log.stdout.split('\0').filter(Boolean)) {
    const [date, ...names] = entry.split('\n').filter(Boolean);
    for (const name of names) added.set(name.slice(name.lastIndexOf('/') + 1), new Date(date as string));
  }
  return added;
}

/** The migration check as the deploy script and the tests run it on this repository. */
export function checkMigrationDates(root: string, now = new Date()): { files: string[]; problems: string[] } {
  const files = readdirSync(join(root, MIGRATIONS_PATH)).filter((name) => name.endsWith('.sql'));
  return { files, problems: migrationDateProblems(files, committedAt(root), now) };
}
