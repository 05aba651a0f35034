import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The house rules of the README's layout section, checked on every import:
 * the deployables share code only through src/core, and the devstack sees the product
 * only through its declared contracts.
 */
const root = resolve(import.meta.dirname, '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)));
}

/** Every import of a file, resolved to a path from the repository root (packages stay as they are). */
function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  const specifiers = [...text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s*['"]([^'"]+)['"]/g)].map((m) => m[1] as string);
  return specifiers.map((specifier) => {
    if (specifier.startsWith('#core/')) return `src/core/${specifier.slice('#core/'.length)}`;
    if (specifier.startsWith('#retrieval/')) return `src/retrieval/${specifier.slice('#retrieval/'.length)}`;
    if (specifier.startsWith('.')) return relative(root, resolve(root, file, '..', specifier));
    return specifier;
  });
}

const RULES: { from: string; mayNotImport: RegExp; why: string }[] = [
  {
    from: 'src/core',
    mayNotImport: /^(src\/api|workers|devstack|test|bench)\//,
    why: 'core is shared: it depends on no deployable',
  },
  {
    from: 'src/retrieval',
    mayNotImport: /^(src\/api|workers|devstack|test|bench)\//,
    why: 'retrieval and answering are shared: they ask the API for access rules through their own interface',
  },
  { from: 'src/api', mayNotImport: /^(workers|devstack|test|bench)\//, why: 'the API worker is its own deployable' },
  {
    from: 'workers/ingest',
    mayNotImport: /^(src\/api|workers\/scoring|devstack|test|bench)\//,
    why: 'a worker shares only core',
  },
  {
    from: 'workers/scoring',
    mayNotImport: /^(src\/api|workers\/ingest|devstack|test|bench)\//,
    why: 'a worker shares only core',
  },
  {
    from: 'devstack',
    mayNotImport: /^(src\/(?!core\/contracts\/)|(workers|test|bench)\/)/,
    why: 'the devstack sees the product only through src/core/contracts',
  },
];

describe('layout', () => {
  for (const rule of RULES) {
    it(`${rule.from}: ${rule.why}`, () => {
      const broken = sourceFiles(rule.from).flatMap((file) =>
        importsOf(file)
          .filter((target) => rule.mayNotImport.test(target))
          .map((target) => `${file} → ${target}`),
      );
      expect(broken).toEqual([]);
    });
  }

  it('outside core and retrieval, they are imported through #core and #retrieval, never by a climbing path', () => {
    const climbing = ['src/api', 'src/retrieval', 'workers', 'devstack', 'test', 'bench'].flatMap((dir) =>
      sourceFiles(dir).filter((file) =>
        /from\s*['"](\.\.\/)+(src\/)?(core|retrieval)\//.test(readFileSync(join(root, file), 'utf8')),
      ),
    );
    expect(climbing).toEqual([]);
  });

  it('every file of the API worker is reachable from its entry point', () => {
    const reached = new Set<string>();
    const visit = (file: string) => {
      if (reached.has(file) || !file.startsWith('src/api/')) return;
      reached.add(file);
      for (const target of importsOf(file)) visit(target);
    };
    visit('src/api/index.ts');
    expect(sourceFiles('src/api').filter((file) => !reached.has(file))).toEqual([]);
  });
});
