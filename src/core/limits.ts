/**
 * The product's limits, each defined once: the API enforces them on what it accepts, the
 * ingest worker on what it fetches and chunks, the devstack's bucket like the hosted one.
 */

import { MAX_DOCUMENT_BYTES } from './contracts/uploads.ts';

// What the web app also checks an upload against, a contract of its own.
export { MAX_DOCUMENT_BYTES, UPLOAD_EXTENSIONS, type UploadExtension } from './contracts/uploads.ts';

/** What may come before an upload's file part: the boundary, other form fields and the part headers. */
export const MAX_UPLOAD_BYTES_BEFORE_FILE = 64 * 1024;

/**
 * The largest upload body that may be declared: the file, what may come before it, and room for
 * the closing boundary. The bytes themselves are counted as they stream, chunked or not.
 */
export const MAX_UPLOAD_BODY_BYTES = MAX_DOCUMENT_BYTES + MAX_UPLOAD_BYTES_BEFORE_FILE + 1024;

/**
 * The largest QStash delivery a worker reads. Its messages are a few hundred bytes; a failure
 * callback wraps one, base64-encoded, with QStash's own fields. The margin is wide; anything
 * bigger is not QStash's.
 */
export const MAX_QSTASH_BODY_BYTES = 256 * 1024;

/** A collection's chunk_size, in characters. */
export const MIN_CHUNK_SIZE = 100;
export const MAX_CHUNK_SIZE = 8000;

/**
 * What one document may yield, however small its file: a spreadsheet can repeat one shared
 * string in every cell, a table its header in every row. Past either limit the rest is not read
 * and the job ends `partial`. The ingest worker's settings may lower or raise them.
 */
export const MAX_DOCUMENT_CHARS = 16_000_000;
export const MAX_DOCUMENT_CHUNKS = 20_000;

/**
 * Bytes an Office package (a ZIP) may inflate in all, its XML parts and its images together: well
 * inside a 128 MB isolate, and far more than the text of any real document needs.
 */
export const MAX_PACKAGE_INFLATED_BYTES = 48 * 1024 * 1024;

/**
 * Bytes one compressed stream of a PDF may expand to. pdf.js holds a stream whole once it decodes
 * it (a page's content, a font, an image), so a 200 KB file of one flate bomb became 800 MB.
 */
export const MAX_PDF_STREAM_BYTES = 16 * 1024 * 1024;

/**
 * What pdf.js may decompress, counted inside pdf.js (workers/ingest/src/parsers/pdf-decode-budget.ts):
 * while one page is read (its content streams, images and fonts, which pdf.js holds until the page is
 * done), in one extract step (past it the step ends after its page and the next step reads on), and
 * for the whole document (past it the rest is not read). A real page decodes a few hundred kilobytes,
 * a page of flate-compressed photos a few megabytes.
 */
export const MAX_PDF_PAGE_DECODED_BYTES = 48 * 1024 * 1024;
export const MAX_PDF_STEP_DECODED_BYTES = 64 * 1024 * 1024;
export const MAX_PDF_DOCUMENT_DECODED_BYTES = 1024 * 1024 * 1024;

/** Pages of a PDF read at most (a warning names the rest), as slides are capped for presentations. */
export const MAX_PDF_PAGES = 2_000;

/**
 * Active API keys (neither revoked nor expired) one user may hold. Keys never multiply a user's rate
 * limits (those count per user), but each is a credential to keep track of and a row per user;
 * 50 is far beyond one key per program and environment.
 */
export const MAX_API_KEYS_PER_USER = 50;

/** An invite link's optional `max_uses`, 1 up to this: far beyond any real invitation, well inside a Postgres integer. */
export const MAX_SHARE_USES = 1_000_000;

/**
 * Chunks one user's documents may make per UTC day, across all collections: a signed-up user
 * cannot keep the queue, the embedding model and the index busy for everyone else. 100,000
 * chunks is about 100 M characters at the default chunk size. Settings may change it.
 */
export const DAILY_INGEST_CHUNKS = 100_000;

/**
 * Ingest steps of one user's documents under way at once (QStash flow control, one key per user):
 * a user who uploads many large files at once waits for their own, and everyone else's small
 * upload goes straight through (bench/hostile/tenant-fairness.ts). Every step is mostly waiting on the
 * database, the embedding model and the vector index, so four keep one user's documents moving.
 */
export const INGEST_PARALLELISM_PER_USER = 4;

/**
 * Collections one question may search at once (`collection_ids`): each is one more query per
 * list (dense and sparse) to the vector index, run in parallel. Dify caps a chat app's knowledge
 * bases at about this; a question that needs more belongs in fewer, larger collections.
 */
export const MAX_QUERY_COLLECTIONS = 10;

/**
 * A document's metadata (issue 22): a flat object of strings, numbers, booleans and lists of strings,
 * copied onto every vector of the document, so each byte of it is stored once per chunk. Keys are plain
 * identifiers, so that a key can never carry filter syntax. Nested objects are refused: depth 1.
 */
export const MAX_METADATA_KEYS = 32;
export const MAX_METADATA_KEY_LENGTH = 64;
export const MAX_METADATA_STRING_LENGTH = 512;
export const MAX_METADATA_LIST_ITEMS = 32;
/** The whole object as JSON, in UTF-8 bytes: well inside Upstash's metadata per vector. */
export const MAX_METADATA_BYTES = 8 * 1024;

/**
 * A search filter (src/retrieval/filter.ts): how deep `and`/`or`/`not` may nest, how many comparisons it
 * may hold, how many values one `in` may list, and its size as JSON. Each bounds the filter string sent
 * to the vector index and the work of reading it.
 */
export const MAX_FILTER_DEPTH = 8;
export const MAX_FILTER_CONDITIONS = 64;
export const MAX_FILTER_IN_VALUES = 100;
export const MAX_FILTER_BYTES = 16 * 1024;

/** The most neighbours a cited passage is shown with on either side (GET …/passages/{chunk_index}). */
export const MAX_PASSAGES_AROUND = 10;

/** The longest comment an asker may leave with a rating of an answer (PUT /query/answers/{id}/feedback). */
export const MAX_FEEDBACK_COMMENT = 2000;
