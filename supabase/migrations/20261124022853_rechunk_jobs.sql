-- Re-chunking a document (POST /collections/{id}/rechunk) ingests its stored original again as a new
-- document; the job names the document it replaces, which goes once the new one is indexed. Set null
-- when that document is deleted meanwhile: there is then nothing left to replace.
alter table public.ingest_jobs
  add column replaces_document_id uuid references public.documents (id) on delete set null;

create index ingest_jobs_replaces_idx on public.ingest_jobs (replaces_document_id) where replaces_document_id is not null;
