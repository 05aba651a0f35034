import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/** docs/architecture.md is the map of the repository; these keep it true as the tree changes. */
const root = resolve(import.meta.dirname, '../..');
const page = readFileSync(join(root, 'docs/architecture.md'), 'utf8');
const tracked = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);

/** Folders at the top of the repository that git tracks, without dot-folders (tooling) and node_modules. */
const topLevelFolders = [
  ...new Set(tracked.filter((file) => file.includes('/')).map((file) => file.slice(0, file.indexOf('/')))),
].filter((name) => !name.startsWith('.') && name !== 'node_modules');

const topLevelNames = new Set(tracked.map((file) => file.split('/')[0]));

/**
 * What the page writes in backticks that is a path: no spaces or placeholders, a slash inside, and
 * either a top-level name first (`src/core/`) or a file name last (so a misspelled folder is caught
 * too). Media types (`text/event-stream`), routes (`/ingest`) and import aliases (`#core/…`) are not.
 */
function pathsInBackticks(text: string): string[] {
  const spans = [...text.matchAll(/`([^`\n]+)`/g)].map((match) => match[1] as string);
  return spans.filter(
    (span) =>
      /^[\w.@-]+(\/[\w.@-]*)+$/.test(span) && (topLevelNames.has(span.split('/')[0] as string) || /\.[a-z]{1,5}$/.test(span)),
  );
}

describe('docs/architecture.md', () => {
  it('finds the top-level folders and the paths it checks', () => {
    expect(topLevelFolders).toContain('src');
    expect(pathsInBackticks(page).length).toBeGreaterThan(50);
  });

  it('names every top-level folder of the repository', () => {
    expect(topLevelFolders.filter((folder) => !page.includes(`\`${folder}/\``))).toEqual([]);
  });

  it('names only paths that exist', () => {
    expect(pathsInBackticks(page).filter((path) => !existsSync(join(root, path)))).toEqual([]);
  });
});
