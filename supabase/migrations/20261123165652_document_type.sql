-- The document's type, which decides how it is parsed: set with the row for an upload, and
-- by the ingest worker when it fetches a URL (null until then).
alter table public.documents
  add column doc_type text check (doc_type in ('pdf', 'docx', 'pptx', 'xlsx', 'csv', 'txt', 'md', 'html'));

-- Until now the type was only in the stored original's name, original.<type>.
update public.documents
   set doc_type = substring(storage_path from '\.([a-z]+)$')
 where substring(storage_path from '\.([a-z]+)$') in ('pdf', 'docx', 'pptx', 'xlsx', 'csv', 'txt', 'md', 'html');
