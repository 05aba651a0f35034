-- Documents, their chunks and the ingest jobs that produce them.
-- A document belongs to a collection, or (collection_id null) to its owner's
-- personal namespace. Vectors live in Upstash Vector and originals in Storage;
-- document_chunks is the map from a document to its vector ids, used at deletion.

create table public.documents (
  id uuid primary key default gen_random_uuid(),
  collection_id uuid references public.collections (id) on delete cascade,
  user_id uuid not null references auth.users (id) on delete cascade,
  name text not null,
  source_kind text not null check (source_kind in ('upload', 'url')),
  source_url text,
  content_type text not null,
  size_bytes bigint not null default 0,
  -- Storage key of the uploaded original; null for URL sources.
  storage_path text,
  -- The collection's chunk_size when the document was ingested.
  chunk_size integer not null,
  chunk_count integer not null default 0,
  created_at timestamptz not null default now()
);
create index documents_collection_idx on public.documents (collection_id, created_at desc);
create index documents_personal_idx on public.documents (user_id, created_at desc) where collection_id is null;

-- One row per chunk. Text chunks are written by the extract step; image chunks get
-- their text when the image is described. Vector id = hash(document, chunk index).
create table public.document_chunks (
  document_id uuid not null references public.documents (id) on delete cascade,
  chunk_index integer not null check (chunk_index >= 0),
  vector_id text not null,
  chunk_type text not null check (chunk_type in ('text', 'image_description')),
  text text,
  metadata jsonb not null default '{}'::jsonb,
  -- Storage key of the figure or scanned page, for image_description chunks.
  image_path text,
  state text not null default 'pending' check (state in ('pending', 'done', 'failed')),
  error text,
  primary key (document_id, chunk_index)
);

create table public.ingest_jobs (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references auth.users (id) on delete cascade,
  collection_id uuid references public.collections (id) on delete cascade,
  -- Set null when a failed job's document is removed; the job keeps its error.
  document_id uuid references public.documents (id) on delete set null,
  source text not null,
  status text not null default 'queued' check (status in ('queued', 'processing', 'succeeded', 'partial', 'failed')),
  chunks_processed integer not null default 0,
  chunks_total integer not null default 0,
  error_message text,
  -- Parser warnings (pages or images lost), reported when the job ends as partial.
  warnings jsonb not null default '[]'::jsonb,
  -- A long PDF is extracted a page range per step: the next page to read, and whether
  -- every page has been read (the job cannot finish before).
  extract_cursor integer not null default 1,
  extracted boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index ingest_jobs_user_idx on public.ingest_jobs (user_id, created_at desc);
create index ingest_jobs_document_idx on public.ingest_jobs (document_id);

alter table public.documents enable row level security;
alter table public.document_chunks enable row level security;
alter table public.ingest_jobs enable row level security;
