-- The API for programs (issue 12): API keys, ingestion webhooks, and jobs and documents that a
-- program can manage: duplicates recognised by their bytes, documents replaced by a new version.

-- A key is shown once; only its SHA-256 is kept. It is 256 random bits, so a plain hash (no salt,
-- no slow hash) cannot be reversed or guessed, and one indexed lookup finds it. The prefix stays in
-- clear so that owners can tell their keys apart. A key restricted to a collection goes with it:
-- it must never outlive the restriction as a key to everything.
create table public.api_keys (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references auth.users (id) on delete cascade,
  name text not null check (char_length(name) between 1 and 100),
  prefix text not null,
  key_hash text not null unique,
  scopes jsonb not null check (jsonb_typeof(scopes) = 'array' and jsonb_array_length(scopes) > 0),
  collection_id uuid references public.collections (id) on delete cascade,
  expires_at timestamptz,
  last_used_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz not null default now()
);
create index api_keys_user_idx on public.api_keys (user_id, created_at desc);

-- Registrations of a user's receivers. The secret is kept as it was shown: every delivery is
-- signed with it. Only the service reaches these tables (row-level security denies every client role).
create table public.webhooks (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references auth.users (id) on delete cascade,
  collection_id uuid references public.collections (id) on delete cascade,
  url text not null,
  events jsonb not null check (jsonb_typeof(events) = 'array' and jsonb_array_length(events) > 0),
  secret text not null,
  active boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index webhooks_user_idx on public.webhooks (user_id, created_at desc);

-- One row per event sent to a registration, written in the statement that ends the job, so that no
-- ending is lost between the job's update and the queue. The payload is fixed then, byte for byte:
-- every attempt sends, and signs, the same body. `attempts_log` records each attempt.
create table public.webhook_deliveries (
  id uuid primary key default gen_random_uuid(),
  webhook_id uuid not null references public.webhooks (id) on delete cascade,
  -- No foreign key: a delivery outlives its job (a deleted collection takes its jobs).
  job_id uuid not null,
  event text not null,
  payload text not null,
  status text not null default 'pending' check (status in ('pending', 'delivered', 'retrying', 'failed', 'skipped')),
  attempts integer not null default 0,
  response_status integer,
  last_error text,
  next_retry_at timestamptz,
  attempts_log jsonb not null default '[]'::jsonb,
  -- Set when its message is handed to the queue; the sweep re-queues rows left without one.
  queued_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index webhook_deliveries_webhook_idx on public.webhook_deliveries (webhook_id, created_at desc);
create index webhook_deliveries_unqueued_idx on public.webhook_deliveries (created_at) where queued_at is null;

-- The same bytes are one document per namespace (a collection, or a user's personal space). Copies
-- made to re-chunk a document carry no hash until the document they replace is gone.
alter table public.documents add column content_sha256 text;
create unique index documents_content_idx on public.documents (coalesce(collection_id, user_id), content_sha256)
  where content_sha256 is not null;

-- One new version of a document at a time (an upload, a URL fetched again or a re-chunk): two sent at the
-- same moment would both pass a check made before either job exists, and both replace it.
create unique index ingest_jobs_replacing_idx on public.ingest_jobs (replaces_document_id)
  where replaces_document_id is not null and status in ('queued', 'processing');

-- A new version's job sets this as it starts replacing the old document (its vectors, files and rows go,
-- then the job ends): from then on it can no longer be cancelled, so that both versions are never lost.
alter table public.ingest_jobs add column finishing boolean not null default false;

-- GET /ingest/jobs?collection_id=…, newest first.
create index ingest_jobs_user_collection_idx on public.ingest_jobs (user_id, collection_id, created_at desc);

alter table public.api_keys enable row level security;
alter table public.webhooks enable row level security;
alter table public.webhook_deliveries enable row level security;
