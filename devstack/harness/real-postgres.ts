import postgres from 'postgres';

const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * A fresh database on the real PostgreSQL for one test run, dropped afterwards.
 * Where no server answers, the real-Postgres tests are skipped, unless
 * REQUIRE_REAL_POSTGRES is set (CI), where that is a failure.
 */
export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> } | undefined> {
  const admin = postgres(ADMIN_URL, { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await admin`select 1`;
  } catch (error) {
    await admin.end();
    if (process.env.REQUIRE_REAL_POSTGRES) throw new Error(`real PostgreSQL unreachable at ${ADMIN_URL}: ${error}`);
    console.warn(`Skipping real-PostgreSQL tests: nothing answers at ${ADMIN_URL}`);
    return undefined;
  }
  return createDatabase(admin, ADMIN_URL, 'rag_test');
}

/**
 * A new database named `prefix_…` on the server `admin` is connected to (`serverUrl`), so that runs
 * do not see each other's rows; `drop` removes it and closes `admin`. The load bench uses it too.
 */
export async function createDatabase(
  admin: postgres.Sql,
  serverUrl: string,
  prefix: string,
): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  await admin.unsafe(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}
