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

/** Postgres' unique_violation of this index or constraint: a concurrent request inserted the same key first. */
export function isUniqueViolation(error: unknown, index: string): boolean {
  return error instanceof postgres.PostgresError && error.code === '23505' && error.constraint_name === index;
}

/** postgres.js's own codes for a connection that failed, closed or timed out. */
const CONNECTION_CODES = new Set(['CONNECTION_CLOSED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT', 'CONNECTION_ENDED']);
/** SQLSTATEs of a server that is going away or full: 08xxx connection exceptions, shutdowns, too many connections. */
const UNAVAILABLE_STATE = /^(08...|57P0[1-3]|53300)$/;

/**
 * The database could not be reached or dropped the connection: a passing outage, not a bug. A
 * socket error that workerd raised under a query ("connection attempt failed", "Network
 * connection lost") carries the query postgres.js attached to it but none of its codes.
 */
export function isDatabaseUnreachable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error instanceof postgres.PostgresError) return UNAVAILABLE_STATE.test(error.code);
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return CONNECTION_CODES.has(code);
  return 'query' in error;
}
