-- What a passage knows of its document (issue 22): the title the ingest worker found (the file's own, else its
-- first heading) and the file's own date, with which every chunk is indexed (src/retrieval/document-context.ts).
-- Documents indexed before this have context_read false: POST /collections/{id}/rechunk ingests them again.
alter table public.documents add column title text;
alter table public.documents add column document_date text;
alter table public.documents add column context_read boolean not null default false;
alter table public.documents add constraint documents_title_length check (char_length(title) <= 200);
alter table public.documents add constraint documents_document_date_iso check (document_date ~ '^\d{4}-\d{2}-\d{2}$');
