import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The house rules of docs/architecture.md ("What may import what"), checked on every import:
 * the deployables share code only through src/core, and the devstack, the web app and the client
 * see the product only through its declared contracts.
 */
const root = resolve(import.meta.dirname, '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts'))
    .filter((entry) => !/(^|\/)(node_modules|dist)(\/|$)/.test(relative(root, entry.parentPath)))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)));
}

/** Every import of a file, resolved to a path from the repository root (packages stay as they are). */
function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  const specifiers = [
    ...text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s*['"]([^'"]+)['"]/g),
    // `import './x.ts'` for its effects, and `await import('./x.ts')`
    ...text.matchAll(/(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g),
    ...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => m[1] as string);
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

/** Every folder of the repository that holds TypeScript besides test/. */
const OUTSIDE_TEST = ['src', 'workers', 'devstack', 'deploy', 'web', 'client', 'bench'];

/**
 * What runs in a browser or in a program that calls the API: the web app and the typed client. Their
 * tools run on a developer's machine and are named here with why they reach further: the build
 * (web/build.ts, web/vite.config.ts), the screenshot script, which starts a local deployment and seeds
 * it, and client/generate.ts, which writes the description from the API's own routes.
 */
const SHIPPED_TO_CALLERS = ['web', 'client'];
const CALLER_TOOLS = new Set(['web/build.ts', 'web/vite.config.ts', 'web/screenshots.ts', 'client/generate.ts']);

/**
 * The folders whose use of a core module counts as a consumer: the deployables, the shared retrieval
 * code, and the tools that ship or run the product (devstack, deploy, web, client). test/ and bench/ do
 * not count: they exercise modules, so a module they alone share with one deployable still belongs to
 * that deployable. A core module imported by another core module counts that module's consumers, so
 * a helper of something shared is shared too.
 */
const CONSUMERS = ['src/api', 'src/retrieval', 'workers/ingest', 'workers/scoring', 'devstack', 'deploy', 'web', 'client'];
/** Core modules that may have one consumer: SQL belongs to the data layer, contracts to both sides. */
const ONE_CONSUMER_ALLOWED = /^src\/core\/(db|contracts)\//;

function coreConsumers(): Map<string, Set<string>> {
  const importers = new Map<string, Set<string>>();
  for (const file of ['src', 'workers', 'devstack', 'deploy', 'web', 'client', 'bench', 'test'].flatMap(sourceFiles)) {
    for (const target of importsOf(file).filter((target) => target.startsWith('src/core/'))) {
      importers.set(target, (importers.get(target) ?? new Set()).add(file));
    }
  }
  const consumersOf = (module: string, seen: Set<string>): Set<string> => {
    const found = new Set<string>();
    if (seen.has(module)) return found;
    seen.add(module);
    for (const importer of importers.get(module) ?? []) {
      if (importer.startsWith('src/core/')) for (const consumer of consumersOf(importer, seen)) found.add(consumer);
      const consumer = CONSUMERS.find((folder) => importer.startsWith(`${folder}/`));
      if (consumer) found.add(consumer);
    }
    return found;
  };
  return new Map(sourceFiles('src/core').map((module) => [module, consumersOf(module, new Set())]));
}

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

  it('nothing outside test/ imports test/: what a bench or a tool shares with the tests lives outside test/', () => {
    const broken = OUTSIDE_TEST.flatMap(sourceFiles).flatMap((file) =>
      importsOf(file)
        .filter((target) => target.startsWith('test/'))
        .map((target) => `${file} → ${target}`),
    );
    expect(broken).toEqual([]);
  });

  it('nothing outside the API imports its services (tests may drive them directly)', () => {
    const broken = OUTSIDE_TEST.flatMap(sourceFiles)
      .filter((file) => !file.startsWith('src/api/'))
      .flatMap((file) =>
        importsOf(file)
          .filter((target) => target.startsWith('src/api/services/'))
          .map((target) => `${file} → ${target}`),
      );
    expect(broken).toEqual([]);
  });

  it('web/ and client/ import no server code, only the declared contracts (src/core/contracts)', () => {
    const broken = SHIPPED_TO_CALLERS.flatMap(sourceFiles)
      .filter((file) => !CALLER_TOOLS.has(file))
      .flatMap((file) =>
        importsOf(file)
          .filter((target) => /^(src\/(?!core\/contracts\/)|(workers|devstack|deploy|bench|test)\/)/.test(target))
          .map((target) => `${file} → ${target}`),
      );
    expect(broken).toEqual([]);
  });

  it('a core module has at least two consumers, unless it is SQL (db/) or a contract (contracts/)', () => {
    const single = [...coreConsumers()]
      .filter(([module, consumers]) => consumers.size < 2 && !ONE_CONSUMER_ALLOWED.test(module))
      .map(([module, consumers]) => `${module}: ${[...consumers].join(', ') || 'no consumer'}`);
    expect(single).toEqual([]);
  });
});
