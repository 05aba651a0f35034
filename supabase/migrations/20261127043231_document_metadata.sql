-- What a document's owner attaches to it (issue 22): a flat object of strings, numbers, booleans and lists
-- of strings, checked by the API (src/api/schemas/metadata.ts, limits in src/core/limits.ts). Every vector of
-- the document carries a copy, which search filters select on; the documents list filters on this column.
alter table public.documents add column metadata jsonb not null default '{}'::jsonb;
alter table public.documents add constraint documents_metadata_object check (jsonb_typeof(metadata) = 'object');
