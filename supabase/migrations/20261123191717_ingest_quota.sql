-- A per-user daily ingestion quota (issue 9): chunks made per UTC day. Each extract step
-- reserves the chunks it makes, once per (job, range), so a redelivered step is not counted
-- twice. Rows outlive their job and document on purpose: the quota counts work done, so
-- deleting a document does not give its chunks back. They go with the user.
create table public.ingest_usage (
  job_id uuid not null,
  -- The first page of the range (1 for anything but a PDF read in several steps).
  range_start integer not null,
  user_id uuid not null references auth.users (id) on delete cascade,
  day date not null default (now() at time zone 'utc')::date,
  chunks integer not null check (chunks >= 0),
  primary key (job_id, range_start)
);
create index ingest_usage_user_day_idx on public.ingest_usage (user_id, day);
alter table public.ingest_usage enable row level security;
