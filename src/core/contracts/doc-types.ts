/**
 * Contract: the types a document may have (documents.doc_type, whose CHECK constraint lists the same): what
 * decides how the ingest worker reads it. A module of its own so that the web app can name them
 * without the type detection behind them.
 */
export const DOC_TYPES = [
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
  'html',
  'json',
  'jsonl',
  'eml',
  'png',
  'jpeg',
  'webp',
] as const;
export type DocType = (typeof DOC_TYPES)[number];
