-- Uploads may now be HTML, images (PNG, JPEG, WebP), JSON and JSON Lines, EPUB, OpenDocument
-- (ODT, ODS, ODP) and email (EML): the type check lists them all (src/core/documents/doc-types.ts).
alter table public.documents drop constraint if exists documents_doc_type_check;
alter table public.documents
  add constraint documents_doc_type_check check (doc_type in (
    'pdf', 'docx', 'pptx', 'xlsx', 'odt', 'ods', 'odp', 'epub', 'csv', 'txt', 'md', 'html',
    'json', 'jsonl', 'eml', 'png', 'jpeg', 'webp'
  ));
