/**
 * The product's limits, each defined once: the API enforces them on what it accepts, the
 * ingest worker on what it fetches and chunks, the devstack's bucket like the hosted one.
 */

/** The largest original accepted, uploaded or fetched from a URL (supabase/config.toml's bucket says the same). */
export const MAX_DOCUMENT_BYTES = 50 * 1024 * 1024;

/** A collection's chunk_size, in characters. */
export const MIN_CHUNK_SIZE = 100;
export const MAX_CHUNK_SIZE = 8000;
