-- One row per answered question: what was asked, answered and retrieved, how long each
-- part took, and (filled in asynchronously by the scoring worker) how good it was.
create table public.evaluations (
  id uuid primary key default gen_random_uuid(),
  -- Null for the personal namespace.
  collection_id uuid references public.collections (id) on delete cascade,
  user_id uuid not null references auth.users (id) on delete cascade,
  session_id uuid references public.chat_sessions (id) on delete set null,
  question text not null,
  answer text not null,
  sources jsonb not null default '[]'::jsonb,
  faithfulness_score double precision check (faithfulness_score between 0 and 1),
  context_relevance_score double precision check (context_relevance_score between 0 and 1),
  total_latency_ms integer not null,
  embedding_latency_ms integer not null default 0,
  retrieval_latency_ms integer not null,
  generation_latency_ms integer,
  time_to_first_token_ms integer,
  -- Which answer engine produced it: the provider and model, or the devstack's extractive engine.
  engine text not null,
  retrieval_strategy text not null,
  top_k integer not null,
  -- Which scorer filled the scores in (the LLM judge or the lexical scorer), or why it could not.
  scorer text,
  scorer_error text,
  scored_at timestamptz,
  created_at timestamptz not null default now()
);
create index evaluations_collection_idx on public.evaluations (collection_id, created_at desc, id desc);

alter table public.evaluations enable row level security;
