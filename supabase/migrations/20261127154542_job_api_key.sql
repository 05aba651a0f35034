-- The API key a job was created with (issue 25), so that its usage rows (the ingest worker's embeddings and
-- image descriptions) carry the key as an answer's do. Null: made with a bearer token, by a scheduled sync, or
-- before this column; set null when the key is deleted (with its user), as usage_events' is. Nullable and
-- without a default, so adding it rewrites nothing and workers that do not know it keep inserting jobs.
alter table public.ingest_jobs
  add column api_key_id uuid references public.api_keys (id) on delete set null;

-- Deleting a user deletes their keys: the set null looks the key up here rather than reading every job.
create index ingest_jobs_api_key_idx on public.ingest_jobs (api_key_id) where api_key_id is not null;

-- A sync started with a key (a source's creation, POST /sources/{id}/sync) passes it to the jobs of the pages
-- it adds or changes; null for a scheduled one.
alter table public.source_runs
  add column api_key_id uuid references public.api_keys (id) on delete set null;
