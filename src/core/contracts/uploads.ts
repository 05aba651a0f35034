/**
 * Contract: what an upload may be, which the web app checks a file against before sending a byte
 * (web/src/files.ts) and the API enforces (the API decides the type by content). It imports nothing,
 * so that the web app takes these and no server code with them; src/core/limits.ts lists them with
 * the product's other limits.
 */

/** The largest original accepted, uploaded or fetched from a URL (supabase/config.toml's bucket says the same). */
export const MAX_DOCUMENT_BYTES = 50 * 1024 * 1024;

/**
 * The file name extensions an upload may have (the contract's types; `.markdown` is Markdown, `.htm` HTML, `.jpg` JPEG and `.ndjson` JSON Lines too). The web app
 * checks a file against these and MAX_DOCUMENT_BYTES before sending a byte; the API decides by content.
 */
export const UPLOAD_EXTENSIONS = [
  'pdf',
  'docx',
  'pptx',
  'xlsx',
  'odt',
  'ods',
  'odp',
  'epub',
  'csv',
  'txt',
  'md',
  'markdown',
  'html',
  'htm',
  'json',
  'jsonl',
  'ndjson',
  'eml',
  'png',
  'jpg',
  'jpeg',
  'webp',
] as const;
export type UploadExtension = (typeof UPLOAD_EXTENSIONS)[number];
