import postgres from 'postgres';

export type Sql = postgres.Sql;
export type Tx = postgres.TransactionSql;

/**
 * A client for one request, through Hyperdrive (which pools the real connections).
 * Timestamps leave the data layer as ISO strings, which is what the API returns.
 */
export function connect(connectionString: string): Sql {
  return postgres(connectionString, {
    max: 4,
    // Unnamed statements only: Hyperdrive pools server connections between clients,
    // and the devstack's PGlite has a single session that every connection shares.
    prepare: false,
    fetch_types: false,
    connect_timeout: 10,
    idle_timeout: 5,
    onnotice: () => {},
    transform: { value: { from: (value: unknown) => (value instanceof Date ? value.toISOString() : value) } },
  });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids are UUIDs; anything else cannot name a row, and must not reach a uuid cast. */
export const isUuid = (value: string) => UUID.test(value);

/** Postgres' foreign_key_violation: the parent row went away in a concurrent delete. */
export function isMissingParent(error: unknown): boolean {
  return error instanceof postgres.PostgresError && error.code === '23503';
}
