import { defineConfig } from 'vitest/config';

// Two runs of the same worker: against PGlite (what `npm run dev` uses) and, for the
// concurrency tests, against the real PostgreSQL at TEST_DATABASE_URL.
export default defineConfig({
  test: {
    testTimeout: 30_000,
    // CI also writes a JSON summary, from which .ci/run prints its closing line.
    reporters: process.env.CI
      ? ['default', ['json', { outputFile: new URL('../.data/vitest-results.json', import.meta.url).pathname }]]
      : ['default'],
    hookTimeout: 120_000,
    projects: [
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
          exclude: ['unit/**', 'devstack/**', 'api/ingest-faults.test.ts'],
          globalSetup: ['support/global-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          root: 'test',
          // Also the injected-outage tests: no other file here ingests, so the outages hit nothing else.
          include: ['api/concurrency.test.ts', 'api/sharing.test.ts', 'api/ingest-faults.test.ts'],
          globalSetup: ['support/global-setup.ts'],
        },
      },
    ],
  },
});
