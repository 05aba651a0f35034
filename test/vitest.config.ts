import { defineConfig } from 'vitest/config';

// Three runs of the same worker: against PGlite (what `npm run dev` uses); for the concurrency
// tests, against the real PostgreSQL at TEST_DATABASE_URL; and the fault suite, in a deployment
// of its own (also on real PostgreSQL), so that its outages hit no other test.
export default defineConfig({
  test: {
    testTimeout: 30_000,
    // CI also writes a JSON summary, from which .ci/run prints its closing line.
    reporters: process.env.CI
      ? ['default', ['json', { outputFile: new URL('../.data/vitest-results.json', import.meta.url).pathname }]]
      : ['default'],
    hookTimeout: 120_000,
    projects: [
      // `npm run test:deployed`: the smoke journey (test/smoke) against the deployment that
      // RAG_API_URL and the Supabase settings name. The pglite run includes it too, locally.
      ...(process.env.RAG_API_URL
        ? [
            {
              extends: true as const,
              test: { name: 'deployed', root: 'test', include: ['smoke/**/*.test.ts'], testTimeout: 240_000 },
            },
          ]
        : []),
      {
        // Pure logic and devstack services that start themselves: no worker needed.
        extends: true,
        test: { name: 'standalone', root: 'test', include: ['unit/**/*.test.ts', 'devstack/**/*.test.ts'] },
      },
      {
        extends: true,
        test: {
          name: 'pglite',
          root: 'test',
          include: ['**/*.test.ts'],
          exclude: ['unit/**', 'devstack/**', 'api/ingest-faults.test.ts', 'api/faults-*.test.ts'],
          globalSetup: ['support/global-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          root: 'test',
          include: ['api/concurrency.test.ts', 'api/sharing.test.ts'],
          globalSetup: ['support/global-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          // Upstreams taken down one at a time (docs/reliability.md): one file at a time, alone in its deployment.
          name: 'faults',
          root: 'test',
          include: ['api/faults-*.test.ts', 'api/ingest-faults.test.ts'],
          globalSetup: ['support/global-setup.ts'],
          fileParallelism: false,
        },
      },
    ],
  },
});
