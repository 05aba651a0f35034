-- Sources (issue 24): a single URL or a whole site that the service keeps in sync, each page one document.
-- A sync is a run of QStash steps (the ingest worker's /crawl); every run is kept, with its counts and errors.

create table public.sources (
  id uuid primary key default gen_random_uuid(),
  -- Who added it: its documents are theirs and count against their daily quota.
  user_id uuid not null references auth.users (id) on delete cascade,
  collection_id uuid references public.collections (id) on delete cascade,
  kind text not null check (kind in ('url', 'site')),
  url text not null check (char_length(url) <= 2048),
  sitemap_url text check (char_length(sitemap_url) <= 2048),
  max_pages integer not null default 200 check (max_pages between 1 and 2000),
  max_depth integer not null default 3 check (max_depth between 0 and 10),
  include_patterns jsonb not null default '[]'::jsonb check (jsonb_typeof(include_patterns) = 'array'),
  exclude_patterns jsonb not null default '[]'::jsonb check (jsonb_typeof(exclude_patterns) = 'array'),
  allowed_origins jsonb not null default '[]'::jsonb check (jsonb_typeof(allowed_origins) = 'array'),
  metadata jsonb not null default '{}'::jsonb,
  schedule text check (schedule in ('hourly', 'daily', 'weekly')),
  paused boolean not null default false,
  next_sync_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index sources_place_idx on public.sources (coalesce(collection_id, user_id), created_at desc);
-- What the cron picks: scheduled, not paused, due.
create index sources_due_idx on public.sources (next_sync_at) where schedule is not null and not paused;

create table public.source_runs (
  id uuid primary key default gen_random_uuid(),
  source_id uuid not null references public.sources (id) on delete cascade,
  trigger text not null check (trigger in ('created', 'manual', 'schedule')),
  status text not null default 'running' check (status in ('running', 'succeeded', 'partial', 'failed', 'cancelled')),
  -- The counts and errors are written when it ends; while it runs they are read from its pages.
  found integer not null default 0,
  fetched integer not null default 0,
  added integer not null default 0,
  changed integer not null default 0,
  unchanged integer not null default 0,
  failed integer not null default 0,
  skipped integer not null default 0,
  gone integer not null default 0,
  removed integer not null default 0,
  errors jsonb not null default '[]'::jsonb,
  message text,
  -- robots.txt of each origin the run has reached, read once per run: { origin: text or null }.
  robots jsonb not null default '{}'::jsonb,
  -- The step that runs next; a redelivered older step does nothing.
  step integer not null default 1,
  started_at timestamptz not null default now(),
  finished_at timestamptz,
  updated_at timestamptz not null default now()
);
create index source_runs_source_idx on public.source_runs (source_id, started_at desc);
-- One sync of a source at a time.
create unique index source_runs_running_idx on public.source_runs (source_id) where status = 'running';

-- Every page a source knows, by its normalised URL (no fragment, default port, tracking parameters or
-- trailing slash). A run's frontier is its pages with run_id = the run.
create table public.source_pages (
  source_id uuid not null references public.sources (id) on delete cascade,
  url text not null,
  -- The address as first found (fetched as such; a server may tell `/docs/` from `/docs`).
  href text not null,
  document_id uuid references public.documents (id) on delete set null,
  title text,
  etag text,
  last_modified text,
  content_sha256 text,
  -- The page's links as last read, so that a page not modified still leads the crawl on unparsed.
  links jsonb,
  depth integer not null default 0,
  run_id uuid,
  -- How the latest run found it: `alias` led to another address (a redirect, a canonical link); `skipped`
  -- is disallowed by robots.txt and was never fetched.
  state text not null default 'pending'
    check (state in ('pending', 'added', 'changed', 'unchanged', 'failed', 'gone', 'skipped', 'alias')),
  error text,
  -- Syncs in a row that found it gone; at 2 its document goes.
  missed integer not null default 0,
  last_fetched_at timestamptz,
  last_changed_at timestamptz,
  primary key (source_id, url)
);
create index source_pages_frontier_idx on public.source_pages (run_id, depth) where state = 'pending';
create index source_pages_document_idx on public.source_pages (document_id);

-- A crawled page's document says which source made it and when it was last fetched and changed.
alter table public.documents add column source_id uuid references public.sources (id) on delete set null;
alter table public.documents add column fetched_at timestamptz;
alter table public.documents add column changed_at timestamptz;
create index documents_source_idx on public.documents (source_id) where source_id is not null;

alter table public.sources enable row level security;
alter table public.source_runs enable row level security;
alter table public.source_pages enable row level security;
