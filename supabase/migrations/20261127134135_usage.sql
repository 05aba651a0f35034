-- Usage and cost (issue 25): one row per model call (or per batch of them in one step), as its
-- provider reported it. Tied to the user, the API key when one was used, the collection, and the
-- request (the API's request id) or the job or answer it was made for. Rows outlive their
-- collection and key (set null) so that an operator's totals stay whole; they go with the user.
create table public.usage_events (
  id uuid primary key default gen_random_uuid(),
  created_at timestamptz not null default now(),
  -- The UTC day, for per-day grouping and the daily token cap, kept as a column so that the
  -- indexes below serve both without an expression.
  day date not null default (now() at time zone 'utc')::date,
  user_id uuid not null references auth.users (id) on delete cascade,
  api_key_id uuid references public.api_keys (id) on delete set null,
  collection_id uuid references public.collections (id) on delete set null,
  request_id text,
  job_id uuid,
  evaluation_id uuid,
  kind text not null check (kind in ('answer', 'embedding', 'rerank', 'vision', 'judge')),
  -- What the call was for: a question, a search, an ingested document, a scored answer.
  purpose text not null check (purpose in ('query', 'search', 'ingest', 'scoring')),
  model text not null,
  calls integer not null default 1 check (calls >= 0),
  input_tokens integer not null default 0 check (input_tokens >= 0),
  output_tokens integer not null default 0 check (output_tokens >= 0),
  -- Characters sent where the provider reported no tokens (embeddings); else 0.
  characters integer not null default 0 check (characters >= 0),
  -- Passages sent to the reranker.
  documents integer not null default 0 check (documents >= 0)
);
-- The daily cap and a user's own usage per day.
create index usage_events_user_day_idx on public.usage_events (user_id, day);
-- An owner's usage per collection per day.
create index usage_events_collection_day_idx on public.usage_events (collection_id, day) where collection_id is not null;
-- An admin's view of everyone, per day.
create index usage_events_day_idx on public.usage_events (day);
-- The judge's usage takes its answer's key and request (scoring knows only the answer).
create index usage_events_evaluation_idx on public.usage_events (evaluation_id) where evaluation_id is not null;
alter table public.usage_events enable row level security;
